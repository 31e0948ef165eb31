// A starter bot for Arena's Tic-tac-toe, in Java 17 (one file, standard library only).
//
// Build and run (the platform does the same with the file you upload):
//     javac Main.java
//     java -cp . Main   # JSON lines: one message per line on stdin, one reply per line on stdout
//
// The protocol (games/tictactoe/README.md): `init` comes once per match (the reply is
// ignored); `play-turn` asks for a move: `board` maps "r-c" keys to "", "X" or "O", `you`
// is your symbol. Reply {"play": "r-c"} naming an empty cell. A line {"error": ...} is the
// platform's last word. Strategy: win if you can, else block, else the centre, a corner,
// any cell. Put yours in choose(), near the top.

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
    // ---- The game: Tic-tac-toe. Put your strategy in choose() ----
    static final class State {}  // this seat's memory for the match (unused here)

    static final String[][] LINES = {
        {"0-0", "0-1", "0-2"}, {"1-0", "1-1", "1-2"}, {"2-0", "2-1", "2-2"},
        {"0-0", "1-0", "2-0"}, {"0-1", "1-1", "2-1"}, {"0-2", "1-2", "2-2"},
        {"0-0", "1-1", "2-2"}, {"0-2", "1-1", "2-0"},
    };
    static final String[] PREFERENCE = {"1-1", "0-0", "0-2", "2-0", "2-2", "0-1", "1-0", "1-2", "2-1"};

    // The empty cell that completes a line of `symbol`, or null if there is none.
    static String completing(Object board, String symbol) {
        for (String[] line : LINES) {
            int mine = 0, empty = 0;
            String gap = null;
            for (String cell : line) {
                String value = Json.str(Json.get(board, cell), "");
                if (value.equals(symbol)) mine++;
                else if (value.isEmpty()) { empty++; gap = cell; }
            }
            if (mine == 2 && empty == 1) return gap;
        }
        return null;
    }

    // Win if you can, else block, else the centre, a corner, any cell.
    static String choose(Object board, String me) {
        String other = me.equals("X") ? "O" : "X";
        String move = completing(board, me);
        if (move == null) move = completing(board, other);
        if (move != null) return move;
        for (String cell : PREFERENCE) if (Json.str(Json.get(board, cell), "").isEmpty()) return cell;
        return "0-0";
    }

    static Object replyTo(Object message, State state) {
        if ("init".equals(Json.get(message, "action"))) return Json.object("name", "starter");
        return Json.object("play", choose(Json.get(message, "board"), Json.str(Json.get(message, "you"), "X")));
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
