// A starter bot for Arena's Connect four, in Java 17 (one file, standard library only).
//
// Build and run (the platform does the same with the file you upload):
//     javac Main.java
//     java -cp . Main   # JSON lines: one message per line on stdin, one reply per line on stdout
//
// The protocol (games/connectfour/README.md): `init` comes once per match (the reply is
// ignored); `play-turn` asks for a move: `board` is 6 rows (row 0 at the bottom) of 7 cells,
// each "", "X" or "O", and `you` is your symbol. Reply {"play": c} naming a column 0-6 that
// is not full. A line {"error": ...} is the platform's last word. Strategy: win if you can,
// else block, else the column nearest the centre that does not hand the opponent a win.
// Put yours in choose(), near the top.

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

public class Main {
    // ---- The game: Connect four. Put your strategy in choose() ----
    static final class State {}  // this seat's memory for the match (unused here)

    static final int ROWS = 6, COLS = 7;
    static final int[] PREFERENCE = {3, 2, 4, 1, 5, 0, 6};

    // board[row][col]: ' ', 'X' or 'O'; row 0 at the bottom. A copy after `symbol` drops a
    // disc in `col`, or null if the column is full.
    static char[][] drop(char[][] board, int col, char symbol) {
        for (int row = 0; row < ROWS; row++) {
            if (board[row][col] == ' ') {
                char[][] after = new char[ROWS][];
                for (int r = 0; r < ROWS; r++) after[r] = board[r].clone();
                after[row][col] = symbol;
                return after;
            }
        }
        return null;
    }

    static boolean wins(char[][] board, char symbol) {
        int[][] dirs = {{0, 1}, {1, 0}, {1, 1}, {1, -1}};
        for (int r = 0; r < ROWS; r++)
            for (int c = 0; c < COLS; c++)
                for (int[] d : dirs) {
                    int k = 0;
                    while (k < 4) {
                        int y = r + k * d[0], x = c + k * d[1];
                        if (y < 0 || y >= ROWS || x < 0 || x >= COLS || board[y][x] != symbol) break;
                        k++;
                    }
                    if (k == 4) return true;
                }
        return false;
    }

    static int choose(char[][] board, char me) {
        char other = me == 'X' ? 'O' : 'X';
        List<Integer> free = new ArrayList<>();
        for (int col : PREFERENCE) if (board[ROWS - 1][col] == ' ') free.add(col);
        for (char symbol : new char[] {me, other})  // win, else block
            for (int col : free)
                if (wins(drop(board, col, symbol), symbol)) return col;
        for (int col : free) {  // do not play under the opponent's winning cell
            char[][] after = drop(board, col, me);
            boolean gives = false;
            for (int c = 0; c < COLS && !gives; c++) {
                char[][] next = drop(after, c, other);
                gives = next != null && wins(next, other);
            }
            if (!gives) return col;
        }
        return free.isEmpty() ? 0 : free.get(0);
    }

    static Object replyTo(Object message, State state) {
        if ("init".equals(Json.get(message, "action"))) return Json.object("name", "starter");
        char[][] board = new char[ROWS][COLS];
        Object rows = Json.get(message, "board");
        for (int r = 0; r < ROWS; r++)
            for (int c = 0; c < COLS; c++) {
                String cell = Json.str(Json.at(Json.at(rows, r), c), "");
                board[r][c] = cell.isEmpty() ? ' ' : cell.charAt(0);
            }
        char me = "O".equals(Json.get(message, "you")) ? 'O' : 'X';
        return Json.object("play", choose(board, me));
    }

    // ---- The line loop: one JSON message per line in, one JSON reply per line out ----
    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        BufferedWriter out = new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8));
        State state = new State();  // one process plays one seat of one match
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) continue;
            Object message = Json.parse(line);
            if (message instanceof Map && ((Map<?, ?>) message).size() == 1 && ((Map<?, ?>) message).containsKey("error")) {
                Object error = Json.get(message, "error");
                System.err.println(error instanceof String ? error : Json.write(error));
                break;  // the platform's last word
            }
            out.write(Json.write(replyTo(message, state)));
            out.write('\n');
            out.flush();
        }
    }

    // ---- A compact JSON reader and writer (the same in every Java starter) ----
    // Values: null, Boolean, Double (every number read), String, List<Object>, Map<String, Object>.
    static final class Json {
        private final String s;
        private int i;

        private Json(String text) { s = text; }

        static Object parse(String text) {
            Json reader = new Json(text);
            Object value = reader.value();
            reader.space();
            if (reader.i != text.length()) reader.fail();
            return value;
        }

        // A key of an object, or null (also when `value` is not an object).
        static Object get(Object value, String key) { return value instanceof Map ? ((Map<?, ?>) value).get(key) : null; }
        // An item of an array, or null.
        static Object at(Object value, int index) {
            return value instanceof List && index >= 0 && index < ((List<?>) value).size() ? ((List<?>) value).get(index) : null;
        }
        @SuppressWarnings("unchecked")
        static List<Object> list(Object value) { return value instanceof List ? (List<Object>) value : Collections.emptyList(); }
        static String str(Object value, String otherwise) { return value instanceof String ? (String) value : otherwise; }
        static double num(Object value, double otherwise) {
            if (value instanceof Number) return ((Number) value).doubleValue();
            if (value instanceof String) {
                try { return Double.parseDouble(((String) value).trim()); } catch (NumberFormatException e) { return otherwise; }
            }
            return otherwise;
        }
        static int integer(Object value, int otherwise) { return (int) num(value, otherwise); }
        static boolean bool(Object value) { return Boolean.TRUE.equals(value); }
        // An object from key, value, key, value...: Json.object("play", "1-1").
        static Map<String, Object> object(Object... pairs) {
            Map<String, Object> map = new LinkedHashMap<>();
            for (int k = 0; k + 1 < pairs.length; k += 2) map.put((String) pairs[k], pairs[k + 1]);
            return map;
        }

        static String write(Object value) {
            StringBuilder out = new StringBuilder();
            write(value, out);
            return out.toString();
        }

        private static void write(Object value, StringBuilder out) {
            if (value == null) out.append("null");
            else if (value instanceof Boolean) out.append(value);
            else if (value instanceof Double || value instanceof Float) {
                double n = ((Number) value).doubleValue();
                if (Double.isNaN(n) || Double.isInfinite(n)) n = 0;  // JSON has no NaN or Infinity
                if (n == Math.rint(n) && Math.abs(n) < 1e15) out.append((long) n);
                else out.append(n);
            } else if (value instanceof Number) out.append(((Number) value).longValue());
            else if (value instanceof Map) {
                out.append('{');
                boolean first = true;
                for (Map.Entry<?, ?> entry : ((Map<?, ?>) value).entrySet()) {
                    if (!first) out.append(',');
                    first = false;
                    write(String.valueOf(entry.getKey()), out);
                    out.append(':');
                    write(entry.getValue(), out);
                }
                out.append('}');
            } else if (value instanceof List) {
                out.append('[');
                boolean first = true;
                for (Object item : (List<?>) value) {
                    if (!first) out.append(',');
                    first = false;
                    write(item, out);
                }
                out.append(']');
            } else {
                String text = value.toString();
                out.append('"');
                for (int k = 0; k < text.length(); k++) {
                    char c = text.charAt(k);
                    if (c == '"') out.append("\\\"");
                    else if (c == '\\') out.append("\\\\");
                    else if (c == '\n') out.append("\\n");
                    else if (c < 0x20 || c > 0x7e) out.append(String.format("\\u%04x", (int) c));
                    else out.append(c);
                }
                out.append('"');
            }
        }

        private void fail() { throw new IllegalArgumentException("bad JSON at " + i); }

        private void space() {
            while (i < s.length() && " \t\r\n".indexOf(s.charAt(i)) >= 0) i++;
        }

        private boolean eat(String word) {
            if (!s.startsWith(word, i)) return false;
            i += word.length();
            return true;
        }

        private Object value() {
            space();
            if (i >= s.length()) fail();
            char c = s.charAt(i);
            if (c == '{') {
                Map<String, Object> map = new LinkedHashMap<>();
                i++;
                space();
                if (eat("}")) return map;
                while (true) {
                    space();
                    if (i >= s.length() || s.charAt(i) != '"') fail();
                    String key = string();
                    space();
                    if (!eat(":")) fail();
                    map.put(key, value());
                    space();
                    if (eat(",")) continue;
                    if (eat("}")) return map;
                    fail();
                }
            }
            if (c == '[') {
                List<Object> list = new ArrayList<>();
                i++;
                space();
                if (eat("]")) return list;
                while (true) {
                    list.add(value());
                    space();
                    if (eat(",")) continue;
                    if (eat("]")) return list;
                    fail();
                }
            }
            if (c == '"') return string();
            if (eat("true")) return Boolean.TRUE;
            if (eat("false")) return Boolean.FALSE;
            if (eat("null")) return null;
            int start = i;
            while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) i++;
            if (start == i) fail();
            return Double.parseDouble(s.substring(start, i));
        }

        private String string() {
            StringBuilder out = new StringBuilder();
            i++;  // the opening quote
            while (i < s.length() && s.charAt(i) != '"') {
                char c = s.charAt(i++);
                if (c != '\\') {
                    out.append(c);
                    continue;
                }
                if (i >= s.length()) fail();
                char e = s.charAt(i++);
                switch (e) {
                    case 'n': out.append('\n'); break;
                    case 't': out.append('\t'); break;
                    case 'r': out.append('\r'); break;
                    case 'b': out.append('\b'); break;
                    case 'f': out.append('\f'); break;
                    case 'u':
                        if (i + 4 > s.length()) fail();
                        out.append((char) Integer.parseInt(s.substring(i, i + 4), 16));  // surrogates pair up as chars
                        i += 4;
                        break;
                    default: out.append(e);  // \" \\ \/
                }
            }
            if (i >= s.length()) fail();
            i++;  // the closing quote
            return out.toString();
        }
    }
    // ---- end of the JSON code ----
}
