// A starter bot for Arena's Tron, in C++20 (standard library only).
//
// Build and run (the platform does the same with the file you upload):
//     g++ -std=c++20 -O2 -o bot bot.cpp
//     ./bot          # JSON lines: one message per line on stdin, one reply per line on stdout
//
// The protocol (games/tron/README.md): `init` comes once per match (the reply is ignored);
// `play-turn` asks for a move every lap: `board` holds one trail per seat, each a list of
// [x, y] cells head first (a dead snake's is []), `player-index` is your seat. Reply
// {"play": d} with d one of "x+", "x-", "y+", "y-". A line {"error": ...} is the platform's
// last word. Strategy: of the free cells next to the head, the one from which the most cells
// can be reached (a flood fill), avoiding cells another head could also enter. Put yours in
// choose(), below the JSON code.

#include <algorithm>
#include <array>
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

// ---- The game: Tron. Put your strategy in choose() ----
struct State {};  // this seat's memory for the match (unused here)

const int SIZE = 100;  // BotsArena's grid: 0..99 each way
const char* NAMES[4] = {"x+", "x-", "y+", "y-"};
const int STEPS[4][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}};

bool inside(int x, int y) { return x >= 0 && x < SIZE && y >= 0 && y < SIZE; }

// How many free cells a flood fill from (x, y) reaches (at most `limit`).
int room(int x, int y, const std::vector<std::vector<bool>>& taken, int limit = 400) {
    std::vector<std::vector<bool>> seen(SIZE, std::vector<bool>(SIZE, false));
    std::vector<std::pair<int, int>> stack{{x, y}};
    seen[x][y] = true;
    int count = 1;
    while (!stack.empty() && count < limit) {
        auto [cx, cy] = stack.back();
        stack.pop_back();
        for (auto& s : STEPS) {
            int nx = cx + s[0], ny = cy + s[1];
            if (inside(nx, ny) && !seen[nx][ny] && !taken[nx][ny]) {
                seen[nx][ny] = true;
                stack.push_back({nx, ny});
                count++;
            }
        }
    }
    return count;
}

std::string choose(const Json& board, long long me) {
    std::vector<std::vector<bool>> taken(SIZE, std::vector<bool>(SIZE, false));
    std::vector<std::pair<int, int>> heads;
    for (size_t s = 0; s < board.size(); s++) {
        const Json& trail = board[s];
        for (size_t k = 0; k < trail.size(); k++) {
            if (trail[k][0].is_null() || trail[k][1].is_null()) continue;  // off the grid
            int x = int(trail[k][0].integer()), y = int(trail[k][1].integer());
            if (inside(x, y)) taken[x][y] = true;
            if (k == 0) heads.push_back({x, y});
        }
    }
    if (me < 0 || me >= (long long)board.size()) return "x+";
    const Json& head = board[size_t(me)][0];
    if (head.size() < 2 || head[0].is_null() || head[1].is_null()) return "x+";
    int x = int(head[0].integer()), y = int(head[1].integer());
    std::string best = "x+";
    int best_score = -1;
    for (int m = 0; m < 4; m++) {
        int nx = x + STEPS[m][0], ny = y + STEPS[m][1];
        if (!inside(nx, ny) || taken[nx][ny]) continue;
        bool rival_near = false;  // could another head enter this cell too?
        for (auto [hx, hy] : heads)
            if ((hx != x || hy != y) && std::abs(hx - nx) + std::abs(hy - ny) == 1) rival_near = true;
        int score = room(nx, ny, taken) - (rival_near ? 1000 : 0);
        if (score > best_score) { best = NAMES[m]; best_score = score; }
    }
    return best;
}

Json reply_to(const Json& message, State&) {
    if (message["action"].str() == "init") return Json::object().set("name", "starter");
    return Json::object().set("play", choose(message["board"], message["player-index"].integer(0)));
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
