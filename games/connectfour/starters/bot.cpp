// A starter bot for Arena's Connect four, in C++20 (standard library only).
//
// Build and run (the platform does the same with the file you upload):
//     g++ -std=c++20 -O2 -o bot bot.cpp
//     ./bot          # JSON lines: one message per line on stdin, one reply per line on stdout
//
// The protocol (games/connectfour/README.md): `init` comes once per match (the reply is
// ignored); `play-turn` asks for a move: `board` is 6 rows (row 0 at the bottom) of 7 cells,
// each "", "X" or "O", and `you` is your symbol. Reply {"play": c} naming a column 0-6 that
// is not full. A line {"error": ...} is the platform's last word. Strategy: win if you can,
// else block, else the column nearest the centre that does not hand the opponent a win.
// Put yours in choose(), below the JSON code.

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

// ---- A compact JSON value, reader and writer (the same in every C++ starter) ----
struct Json {
    enum Type { Null, Bool, Number, String, Array, Object } type = Null;
    bool boolean = false;
    double number = 0;
    std::string text;
    std::vector<Json> items;                            // Array
    std::vector<std::pair<std::string, Json>> fields;   // Object, in order

    Json() = default;
    Json(std::nullptr_t) {}
    Json(bool b) : type(Bool), boolean(b) {}
    Json(int n) : type(Number), number(n) {}
    Json(long long n) : type(Number), number(double(n)) {}
    Json(double n) : type(Number), number(n) {}
    Json(const char* s) : type(String), text(s) {}
    Json(std::string s) : type(String), text(std::move(s)) {}
    static Json array() { Json j; j.type = Array; return j; }
    static Json object() { Json j; j.type = Object; return j; }

    bool is_null() const { return type == Null; }
    bool has(const std::string& key) const {
        for (auto& f : fields) if (f.first == key) return true;
        return false;
    }
    // A missing key or index reads as null (the last duplicate key wins).
    const Json& operator[](const std::string& key) const {
        static const Json none;
        const Json* found = &none;
        for (auto& f : fields) if (f.first == key) found = &f.second;
        return *found;
    }
    const Json& operator[](size_t i) const {
        static const Json none;
        return i < items.size() ? items[i] : none;
    }
    size_t size() const { return type == Array ? items.size() : fields.size(); }
    std::string str(const std::string& otherwise = "") const { return type == String ? text : otherwise; }
    double num(double otherwise = 0) const {
        if (type == Number) return number;
        if (type == String) { try { return std::stod(text); } catch (...) {} }
        return otherwise;
    }
    long long integer(long long otherwise = 0) const { return (long long)num(double(otherwise)); }
    Json& set(const std::string& key, Json value) { type = Object; fields.emplace_back(key, std::move(value)); return *this; }
    Json& push(Json value) { type = Array; items.push_back(std::move(value)); return *this; }
};

struct JsonReader {
    const std::string& s;
    size_t i = 0;
    explicit JsonReader(const std::string& text) : s(text) {}
    void fail() { throw std::runtime_error("bad JSON at " + std::to_string(i)); }
    void space() { while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) i++; }
    bool eat(const char* word) {
        size_t n = std::strlen(word);
        if (s.compare(i, n, word) != 0) return false;
        i += n;
        return true;
    }
    unsigned hex4() {
        if (i + 4 > s.size()) fail();
        unsigned v = std::stoul(s.substr(i, 4), nullptr, 16);
        i += 4;
        return v;
    }
    static void utf8(std::string& out, unsigned c) {
        if (c < 0x80) out += char(c);
        else if (c < 0x800) { out += char(0xC0 | (c >> 6)); out += char(0x80 | (c & 0x3F)); }
        else if (c < 0x10000) { out += char(0xE0 | (c >> 12)); out += char(0x80 | ((c >> 6) & 0x3F)); out += char(0x80 | (c & 0x3F)); }
        else { out += char(0xF0 | (c >> 18)); out += char(0x80 | ((c >> 12) & 0x3F)); out += char(0x80 | ((c >> 6) & 0x3F)); out += char(0x80 | (c & 0x3F)); }
    }
    std::string string() {
        std::string out;
        i++;  // the opening quote
        while (i < s.size() && s[i] != '"') {
            char c = s[i++];
            if (c != '\\') { out += c; continue; }
            if (i >= s.size()) fail();
            char e = s[i++];
            switch (e) {
                case 'n': out += '\n'; break;
                case 't': out += '\t'; break;
                case 'r': out += '\r'; break;
                case 'b': out += '\b'; break;
                case 'f': out += '\f'; break;
                case 'u': {
                    unsigned c1 = hex4();
                    if (c1 >= 0xD800 && c1 < 0xDC00 && eat("\\u")) c1 = 0x10000 + ((c1 - 0xD800) << 10) + (hex4() - 0xDC00);
                    utf8(out, c1);
                    break;
                }
                default: out += e;  // \" \\ \/
            }
        }
        if (i >= s.size()) fail();
        i++;  // the closing quote
        return out;
    }
    Json value() {
        space();
        if (i >= s.size()) fail();
        char c = s[i];
        if (c == '{') {
            Json j = Json::object();
            i++; space();
            if (i < s.size() && s[i] == '}') { i++; return j; }
            while (true) {
                space();
                if (i >= s.size() || s[i] != '"') fail();
                std::string key = string();
                space();
                if (i >= s.size() || s[i++] != ':') fail();
                j.fields.emplace_back(key, value());
                space();
                if (i < s.size() && s[i] == ',') { i++; continue; }
                if (i < s.size() && s[i] == '}') { i++; return j; }
                fail();
            }
        }
        if (c == '[') {
            Json j = Json::array();
            i++; space();
            if (i < s.size() && s[i] == ']') { i++; return j; }
            while (true) {
                j.items.push_back(value());
                space();
                if (i < s.size() && s[i] == ',') { i++; continue; }
                if (i < s.size() && s[i] == ']') { i++; return j; }
                fail();
            }
        }
        if (c == '"') return Json(string());
        if (eat("true")) return Json(true);
        if (eat("false")) return Json(false);
        if (eat("null")) return Json();
        size_t used = 0;
        double n = std::stod(s.substr(i), &used);  // throws on garbage
        i += used;
        return Json(n);
    }
};

Json parse_json(const std::string& text) {
    JsonReader reader(text);
    Json j = reader.value();
    reader.space();
    if (reader.i != text.size()) reader.fail();
    return j;
}

void write_json(const Json& j, std::string& out) {
    switch (j.type) {
        case Json::Null: out += "null"; break;
        case Json::Bool: out += j.boolean ? "true" : "false"; break;
        case Json::Number: {
            char buf[32];
            double n = j.number;
            if (!std::isfinite(n)) n = 0;  // JSON has no NaN or Infinity
            if (n == std::floor(n) && std::fabs(n) < 1e15) std::snprintf(buf, sizeof buf, "%lld", (long long)n);
            else {
                for (int digits = 15; digits <= 17; digits++) {  // the shortest form that reads back
                    std::snprintf(buf, sizeof buf, "%.*g", digits, n);
                    if (std::strtod(buf, nullptr) == n) break;
                }
            }
            out += buf;
            break;
        }
        case Json::String: {
            out += '"';
            for (unsigned char c : j.text) {
                if (c == '"') out += "\\\"";
                else if (c == '\\') out += "\\\\";
                else if (c == '\n') out += "\\n";
                else if (c < 0x20) { char buf[8]; std::snprintf(buf, sizeof buf, "\\u%04x", c); out += buf; }
                else out += char(c);
            }
            out += '"';
            break;
        }
        case Json::Array:
            out += '[';
            for (size_t k = 0; k < j.items.size(); k++) { if (k) out += ','; write_json(j.items[k], out); }
            out += ']';
            break;
        case Json::Object:
            out += '{';
            for (size_t k = 0; k < j.fields.size(); k++) {
                if (k) out += ',';
                write_json(Json(j.fields[k].first), out);
                out += ':';
                write_json(j.fields[k].second, out);
            }
            out += '}';
            break;
    }
}

std::string dump_json(const Json& j) { std::string out; write_json(j, out); return out; }
// ---- end of the JSON code ----

// ---- The game: Connect four. Put your strategy in choose() ----
struct State {};  // this seat's memory for the match (unused here)

const int ROWS = 6, COLS = 7;
const int PREFERENCE[COLS] = {3, 2, 4, 1, 5, 0, 6};
using Board = std::vector<std::vector<char>>;  // board[row][col]: ' ', 'X' or 'O'; row 0 at the bottom

// Drop a disc of `symbol` in `col`: false (and no change) if the column is full.
bool drop(Board& board, int col, char symbol) {
    for (int row = 0; row < ROWS; row++)
        if (board[row][col] == ' ') { board[row][col] = symbol; return true; }
    return false;
}

bool wins(const Board& board, char symbol) {
    const int dirs[4][2] = {{0, 1}, {1, 0}, {1, 1}, {1, -1}};
    for (int r = 0; r < ROWS; r++)
        for (int c = 0; c < COLS; c++)
            for (auto& d : dirs) {
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

int choose(const Board& board, char me) {
    char other = me == 'X' ? 'O' : 'X';
    std::vector<int> free;
    for (int col : PREFERENCE) if (board[ROWS - 1][col] == ' ') free.push_back(col);
    for (char symbol : {me, other})  // win, else block
        for (int col : free) {
            Board after = board;
            drop(after, col, symbol);
            if (wins(after, symbol)) return col;
        }
    for (int col : free) {  // do not play under the opponent's winning cell
        Board after = board;
        drop(after, col, me);
        bool gives = false;
        for (int c = 0; c < COLS && !gives; c++) {
            Board next = after;
            if (drop(next, c, other) && wins(next, other)) gives = true;
        }
        if (!gives) return col;
    }
    return free.empty() ? 0 : free[0];
}

Json reply_to(const Json& message, State&) {
    if (message["action"].str() == "init") return Json::object().set("name", "starter");
    Board board(ROWS, std::vector<char>(COLS, ' '));
    const Json& rows = message["board"];
    for (int r = 0; r < ROWS; r++)
        for (int c = 0; c < COLS; c++) {
            std::string cell = rows[r][c].str();
            if (!cell.empty()) board[r][c] = cell[0];
        }
    char me = message["you"].str("X") == "O" ? 'O' : 'X';
    return Json::object().set("play", choose(board, me));
}

// ---- The line loop: one JSON message per line in, one JSON reply per line out ----
int main() {
    std::ios::sync_with_stdio(false);
    State state;  // one process plays one seat of one match
    std::string line;
    while (std::getline(std::cin, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty()) continue;
        Json message = parse_json(line);
        if (message.type == Json::Object && message.fields.size() == 1 && message.has("error")) {
            std::cerr << message["error"].str(dump_json(message["error"])) << std::endl;
            break;  // the platform's last word
        }
        std::cout << dump_json(reply_to(message, state)) << '\n' << std::flush;
    }
    return 0;
}
