// A starter bot for Arena's Battleship, in C++20 (standard library only).
//
// Build and run (the platform does the same with the file you upload):
//     g++ -std=c++20 -O2 -o bot bot.cpp
//     ./bot          # JSON lines: one message per line on stdin, one reply per line on stdout
//
// The protocol (games/battleship/README.md): `init` comes once per match and your reply
// PLACES YOUR FLEET: {"name": ..., "boats": ["x1,y1-x2,y2", ...]} (`board` gives `width`,
// `height` and `ship1`..`ship6`, the number of ships of each length, all as strings).
// `play-turn` asks for a shot: `board.your_strikes` lists your shots so far, each
// {"target": "x,y", "result": "" | "hit" | "hit and sunk"}. Reply {"play": "x,y"}. A line
// {"error": ...} is the platform's last word. Strategy: a random fleet; fire next to an
// unsunk hit if there is one, else on a checkerboard of cells not yet tried. Put yours in
// place_fleet() and shoot(), below the JSON code.

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

// ---- The game: Battleship. Put your strategy in place_fleet() and shoot() ----
struct State {};  // this seat's memory for the match (unused here)

std::mt19937 rng{std::random_device{}()};

struct Grid { int width, height; std::vector<int> ships; };  // ships[n-1]: how many of length n

Grid grid(const Json& board) {
    Grid g{int(board["width"].integer(10)), int(board["height"].integer(10)), {}};
    for (int n = 1; n <= 6; n++) g.ships.push_back(int(board["ship" + std::to_string(n)].integer(0)));
    return g;
}

std::string cell(int x, int y) { return std::to_string(x) + "," + std::to_string(y); }

// Random non-overlapping ships, longest first (retried until they all fit).
Json place_fleet(const Grid& g) {
    for (int attempt = 0; attempt < 1000; attempt++) {
        std::vector<std::vector<bool>> taken(g.width, std::vector<bool>(g.height, false));
        Json boats = Json::array();
        bool fits = true;
        for (int length = 6; length >= 1 && fits; length--)
            for (int k = 0; k < g.ships[length - 1] && fits; k++) {
                std::vector<std::array<int, 3>> spots;  // x, y, horizontal?
                for (int x = 0; x < g.width; x++)
                    for (int y = 0; y < g.height; y++)
                        for (int h = 0; h < 2; h++) {
                            bool ok = true;
                            for (int i = 0; i < length && ok; i++) {
                                int a = x + (h ? i : 0), b = y + (h ? 0 : i);
                                ok = a < g.width && b < g.height && !taken[a][b];
                            }
                            if (ok) spots.push_back({x, y, h});
                        }
                if (spots.empty()) { fits = false; break; }
                auto [x, y, h] = spots[std::uniform_int_distribution<size_t>(0, spots.size() - 1)(rng)];
                for (int i = 0; i < length; i++) taken[x + (h ? i : 0)][y + (h ? 0 : i)] = true;
                boats.push(cell(x, y) + "-" + cell(x + (h ? length - 1 : 0), y + (h ? 0 : length - 1)));
            }
        if (fits) return boats;
    }
    return Json::array();
}

std::string shoot(const Json& board) {
    Grid g = grid(board);
    std::vector<std::string> targets;  // in the order first shot
    std::vector<std::string> results;
    const Json& strikes = board["your_strikes"];
    for (size_t k = 0; k < strikes.size(); k++) {
        std::string target = strikes[k]["target"].str(), result = strikes[k]["result"].str();
        size_t at = 0;
        while (at < targets.size() && targets[at] != target) at++;
        if (at == targets.size()) { targets.push_back(target); results.push_back(result); }
        else results[at] = result;
    }
    auto tried = [&](const std::string& t) {
        for (auto& s : targets) if (s == t) return true;
        return false;
    };
    for (size_t k = 0; k < targets.size(); k++) {  // finish what we started
        if (results[k] != "hit") continue;
        int x = 0, y = 0;
        if (std::sscanf(targets[k].c_str(), "%d,%d", &x, &y) != 2) continue;
        const int around[4][2] = {{x + 1, y}, {x - 1, y}, {x, y + 1}, {x, y - 1}};
        for (auto& n : around)
            if (n[0] >= 0 && n[0] < g.width && n[1] >= 0 && n[1] < g.height && !tried(cell(n[0], n[1])))
                return cell(n[0], n[1]);
    }
    std::vector<std::string> free, even;
    for (int x = 0; x < g.width; x++)
        for (int y = 0; y < g.height; y++)
            if (!tried(cell(x, y))) {
                free.push_back(cell(x, y));
                if ((x + y) % 2 == 0) even.push_back(cell(x, y));
            }
    const auto& pool = even.empty() ? free : even;
    if (pool.empty()) return "0,0";
    return pool[std::uniform_int_distribution<size_t>(0, pool.size() - 1)(rng)];
}

Json reply_to(const Json& message, State&) {
    const Json& board = message["board"];
    if (message["action"].str() == "init")
        return Json::object().set("name", "starter").set("boats", place_fleet(grid(board)));
    return Json::object().set("play", shoot(board));
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
