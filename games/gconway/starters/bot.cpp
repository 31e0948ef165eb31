// A starter bot for Arena's gconway (AI Battleground's two-player Game of Life), in C++20
// (standard library only).
//
// Build and run (the platform does the same with the file you upload):
//     g++ -std=c++20 -O2 -o bot bot.cpp
//     ./bot          # JSON lines: one message per line on stdin, one reply per line on stdout
//
// The protocol (games/gconway/README.md): each message is the state, one JSON object:
// `field` (one string per row: "#" yours, "O" theirs, "." dead; the board is a torus),
// `cellsRemaining` (your budget), `maxColonisationDistance` and the clock (`timeLeftForMove`
// ms: answer fast). Reply {"cells": [[row, col], ...]}: at most `cellsRemaining` dead cells,
// each within that distance of one of your live cells. A line {"error": ...} is the
// platform's last word. Strategy: prefer dead cells with exactly two or three of your
// neighbours (they become births next step), spend a few cells a turn. Put yours in
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

// ---- The game: gconway. Put your strategy in choose() ----
struct State {};  // this seat's memory for the match (unused here)

const int PER_TURN = 3;

Json choose(const Json& message) {
    std::vector<std::string> field;
    for (size_t r = 0; r < message["field"].size(); r++) field.push_back(message["field"][r].str());
    Json cells = Json::array();
    if (field.empty() || field[0].empty()) return cells;
    int rows = int(field.size()), cols = int(field[0].size());
    int reach = int(message["maxColonisationDistance"].integer(2));
    long long budget = std::min<long long>(message["cellsRemaining"].integer(0), PER_TURN);
    auto at = [&](int r, int c) { r = ((r % rows) + rows) % rows; c = ((c % cols) + cols) % cols; return field[r][c]; };
    auto own_neighbours = [&](int r, int c) {
        int n = 0;
        for (int dr = -1; dr <= 1; dr++)
            for (int dc = -1; dc <= 1; dc++)
                if ((dr || dc) && at(r + dr, c + dc) == '#') n++;
        return n;
    };
    std::vector<std::vector<bool>> candidate(rows, std::vector<bool>(cols, false));
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++)
            if (field[r][c] == '#')
                for (int dr = -reach; dr <= reach; dr++)
                    for (int dc = -reach; dc <= reach; dc++) {
                        int rr = ((r + dr) % rows + rows) % rows, cc = ((c + dc) % cols + cols) % cols;
                        if (field[rr][cc] == '.') candidate[rr][cc] = true;
                    }
    std::vector<std::array<int, 4>> ranked;  // (not a birth?, -neighbours, row, col)
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++)
            if (candidate[r][c]) {
                int n = own_neighbours(r, c);
                ranked.push_back({n == 2 || n == 3 ? 0 : 1, -n, r, c});
            }
    std::sort(ranked.begin(), ranked.end());
    for (long long k = 0; k < budget && k < (long long)ranked.size(); k++)
        cells.push(Json::array().push(ranked[k][2]).push(ranked[k][3]));
    return cells;
}

Json reply_to(const Json& message, State&) { return Json::object().set("cells", choose(message)); }

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
