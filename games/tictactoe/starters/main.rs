// A starter bot for Arena's Tic-tac-toe, in Rust (standard library only, no crates).
//
// Build and run (the platform does the same with the file you upload):
//     rustc -O --edition 2021 -o bot main.rs
//     ./bot          # JSON lines: one message per line on stdin, one reply per line on stdout
//
// The protocol (games/tictactoe/README.md): `init` comes once per match (the reply is
// ignored); `play-turn` asks for a move: `board` maps "r-c" keys to "", "X" or "O", `you`
// is your symbol. Reply {"play": "r-c"} naming an empty cell. A line {"error": ...} is the
// platform's last word. Strategy: win if you can, else block, else the centre, a corner,
// any cell. Put yours in choose(), below the JSON code.

use std::io::{self, BufRead, Write};

// ---- A compact JSON value, reader and writer ----
#[derive(Clone, Debug, PartialEq)]
enum Json {
    Null,
    Bool(bool),
    Number(f64),
    Str(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>), // in order
}

static NULL: Json = Json::Null;

impl Json {
    /// The item under `key` of an object (the last one if repeated), or null.
    fn get(&self, key: &str) -> &Json {
        match self {
            Json::Object(fields) => fields.iter().rev().find(|(k, _)| k == key).map_or(&NULL, |(_, v)| v),
            _ => &NULL,
        }
    }
    /// An item of an array, or null.
    #[allow(dead_code)]
    fn at(&self, index: usize) -> &Json {
        match self {
            Json::Array(items) => items.get(index).unwrap_or(&NULL),
            _ => &NULL,
        }
    }
    fn str_or<'a>(&'a self, otherwise: &'a str) -> &'a str {
        match self {
            Json::Str(s) => s,
            _ => otherwise,
        }
    }

    fn parse(text: &str) -> Result<Json, String> {
        let mut reader = Reader { s: text.as_bytes(), i: 0 };
        let value = reader.value()?;
        reader.space();
        if reader.i != reader.s.len() {
            return Err(format!("trailing text at {}", reader.i));
        }
        Ok(value)
    }

    fn write(&self, out: &mut String) {
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Number(n) => {
                let n = if n.is_finite() { *n } else { 0.0 }; // JSON has no NaN or Infinity
                if n == n.trunc() && n.abs() < 1e15 {
                    out.push_str(&(n as i64).to_string());
                } else {
                    out.push_str(&n.to_string()); // the shortest form that reads back
                }
            }
            Json::Str(s) => {
                out.push('"');
                for c in s.chars() {
                    match c {
                        '"' => out.push_str("\\\""),
                        '\\' => out.push_str("\\\\"),
                        '\n' => out.push_str("\\n"),
                        c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
                        c => out.push(c),
                    }
                }
                out.push('"');
            }
            Json::Array(items) => {
                out.push('[');
                for (k, item) in items.iter().enumerate() {
                    if k > 0 {
                        out.push(',');
                    }
                    item.write(out);
                }
                out.push(']');
            }
            Json::Object(fields) => {
                out.push('{');
                for (k, (key, value)) in fields.iter().enumerate() {
                    if k > 0 {
                        out.push(',');
                    }
                    Json::Str(key.clone()).write(out);
                    out.push(':');
                    value.write(out);
                }
                out.push('}');
            }
        }
    }

    fn dump(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        out
    }
}

struct Reader<'a> {
    s: &'a [u8],
    i: usize,
}

impl Reader<'_> {
    fn fail<T>(&self) -> Result<T, String> {
        Err(format!("bad JSON at {}", self.i))
    }
    fn peek(&self) -> u8 {
        *self.s.get(self.i).unwrap_or(&0)
    }
    fn space(&mut self) {
        while matches!(self.peek(), b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }
    fn eat(&mut self, word: &str) -> bool {
        if self.s[self.i..].starts_with(word.as_bytes()) {
            self.i += word.len();
            true
        } else {
            false
        }
    }
    fn hex4(&mut self) -> Result<u32, String> {
        let digits = self.s.get(self.i..self.i + 4).ok_or("bad \\u escape")?;
        let code = u32::from_str_radix(std::str::from_utf8(digits).map_err(|e| e.to_string())?, 16)
            .map_err(|e| e.to_string())?;
        self.i += 4;
        Ok(code)
    }
    fn string(&mut self) -> Result<String, String> {
        self.i += 1; // the opening quote
        let mut out: Vec<u8> = Vec::new();
        loop {
            let c = self.peek();
            self.i += 1;
            match c {
                0 if self.i > self.s.len() => return self.fail(),
                b'"' => break,
                b'\\' => {
                    let e = self.peek();
                    self.i += 1;
                    match e {
                        b'n' => out.push(b'\n'),
                        b't' => out.push(b'\t'),
                        b'r' => out.push(b'\r'),
                        b'b' => out.push(8),
                        b'f' => out.push(12),
                        b'u' => {
                            let mut code = self.hex4()?;
                            if (0xD800..0xDC00).contains(&code) && self.eat("\\u") {
                                code = 0x10000 + ((code - 0xD800) << 10) + (self.hex4()?.wrapping_sub(0xDC00) & 0x3FF);
                            }
                            let c = char::from_u32(code).unwrap_or('\u{FFFD}');
                            out.extend_from_slice(c.to_string().as_bytes());
                        }
                        0 => return self.fail(),
                        other => out.push(other), // \" \\ \/
                    }
                }
                other => out.push(other),
            }
        }
        String::from_utf8(out).map_err(|e| e.to_string())
    }
    fn value(&mut self) -> Result<Json, String> {
        self.space();
        match self.peek() {
            b'{' => {
                self.i += 1;
                let mut fields = Vec::new();
                self.space();
                if self.eat("}") {
                    return Ok(Json::Object(fields));
                }
                loop {
                    self.space();
                    if self.peek() != b'"' {
                        return self.fail();
                    }
                    let key = self.string()?;
                    self.space();
                    if !self.eat(":") {
                        return self.fail();
                    }
                    fields.push((key, self.value()?));
                    self.space();
                    if self.eat(",") {
                        continue;
                    }
                    if self.eat("}") {
                        return Ok(Json::Object(fields));
                    }
                    return self.fail();
                }
            }
            b'[' => {
                self.i += 1;
                let mut items = Vec::new();
                self.space();
                if self.eat("]") {
                    return Ok(Json::Array(items));
                }
                loop {
                    items.push(self.value()?);
                    self.space();
                    if self.eat(",") {
                        continue;
                    }
                    if self.eat("]") {
                        return Ok(Json::Array(items));
                    }
                    return self.fail();
                }
            }
            b'"' => Ok(Json::Str(self.string()?)),
            _ if self.eat("true") => Ok(Json::Bool(true)),
            _ if self.eat("false") => Ok(Json::Bool(false)),
            _ if self.eat("null") => Ok(Json::Null),
            _ => {
                let start = self.i;
                while matches!(self.peek(), b'+' | b'-' | b'.' | b'e' | b'E' | b'0'..=b'9') {
                    self.i += 1;
                }
                let text = std::str::from_utf8(&self.s[start..self.i]).map_err(|e| e.to_string())?;
                text.parse::<f64>().map(Json::Number).map_err(|_| format!("bad number at {}", start))
            }
        }
    }
}
// ---- end of the JSON code ----

// ---- The game: Tic-tac-toe. Put your strategy in choose() ----
const LINES: [[&str; 3]; 8] = [
    ["0-0", "0-1", "0-2"],
    ["1-0", "1-1", "1-2"],
    ["2-0", "2-1", "2-2"],
    ["0-0", "1-0", "2-0"],
    ["0-1", "1-1", "2-1"],
    ["0-2", "1-2", "2-2"],
    ["0-0", "1-1", "2-2"],
    ["0-2", "1-1", "2-0"],
];
const PREFERENCE: [&str; 9] = ["1-1", "0-0", "0-2", "2-0", "2-2", "0-1", "1-0", "1-2", "2-1"];

/// The empty cell that completes a line of `symbol`, if any.
fn completing(board: &Json, symbol: &str) -> Option<&'static str> {
    for line in LINES.iter() {
        let values: Vec<&str> = line.iter().map(|cell| board.get(cell).str_or("")).collect();
        let mine = values.iter().filter(|v| **v == symbol).count();
        if mine == 2 {
            if let Some(k) = values.iter().position(|v| v.is_empty()) {
                return Some(line[k]);
            }
        }
    }
    None
}

/// Win if you can, else block, else the centre, a corner, any cell.
fn choose(board: &Json, me: &str) -> &'static str {
    let other = if me == "X" { "O" } else { "X" };
    completing(board, me)
        .or_else(|| completing(board, other))
        .or_else(|| PREFERENCE.iter().copied().find(|cell| board.get(cell).str_or("").is_empty()))
        .unwrap_or("0-0")
}

fn reply_to(message: &Json) -> Json {
    if message.get("action").str_or("") == "init" {
        return Json::Object(vec![("name".to_string(), Json::Str("starter".to_string()))]);
    }
    let play = choose(message.get("board"), message.get("you").str_or("X"));
    Json::Object(vec![("play".to_string(), Json::Str(play.to_string()))])
}

// ---- The line loop: one JSON message per line in, one JSON reply per line out ----
fn main() {
    let stdin = io::stdin();
    let mut out = io::stdout().lock();
    for line in stdin.lock().lines() {
        let line = match line {
            Ok(line) => line,
            Err(_) => break,
        };
        if line.trim().is_empty() {
            continue;
        }
        let message = match Json::parse(&line) {
            Ok(message) => message,
            Err(error) => {
                eprintln!("{}", error);
                continue;
            }
        };
        if let Json::Object(fields) = &message {
            if fields.len() == 1 && fields[0].0 == "error" {
                eprintln!("{}", fields[0].1.str_or(&fields[0].1.dump()));
                break; // the platform's last word
            }
        }
        if writeln!(out, "{}", reply_to(&message).dump()).and_then(|_| out.flush()).is_err() {
            break;
        }
    }
}
