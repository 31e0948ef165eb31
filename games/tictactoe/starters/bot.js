// A starter bot for Arena's Tic-tac-toe, in JavaScript (Node.js, no packages).
//
// Run it (the platform does the same with the file you upload):
//
//	node bot.js --stdio    # JSON lines: one message per line on stdin, one reply per line on stdout
//
// The protocol (games/tictactoe/README.md): `init` comes once per match (the reply is
// ignored); `play-turn` asks for a move: `board` maps "r-c" keys to "", "X" or "O", `you`
// is your symbol. Reply {"play": "r-c"} naming an empty cell. A line {"error": ...} is the
// platform's last word. Strategy: win if you can, else block, else the centre, a corner,
// any cell. Put yours in choose().
"use strict";

const readline = require("node:readline");

// ---- The game: Tic-tac-toe. Put your strategy in choose() ----

const LINES = [
  ["0-0", "0-1", "0-2"], ["1-0", "1-1", "1-2"], ["2-0", "2-1", "2-2"],
  ["0-0", "1-0", "2-0"], ["0-1", "1-1", "2-1"], ["0-2", "1-2", "2-2"],
  ["0-0", "1-1", "2-2"], ["0-2", "1-1", "2-0"],
];
const PREFERENCE = ["1-1", "0-0", "0-2", "2-0", "2-2", "0-1", "1-0", "1-2", "2-1"];

// The empty cell that completes a line of `symbol`, or null if there is none.
function completing(board, symbol) {
  for (const line of LINES) {
    const values = line.map((key) => board[key] || "");
    if (values.filter((v) => v === symbol).length === 2 && values.includes("")) {
      return line[values.indexOf("")];
    }
  }
  return null;
}

// Win if you can, else block, else the centre, a corner, any cell.
function choose(board, me) {
  const other = me === "X" ? "O" : "X";
  const move = completing(board, me) || completing(board, other);
  if (move) return move;
  return PREFERENCE.find((key) => !board[key]) || "0-0";
}

function replyTo(message) {
  if (message.action === "init") return { name: "starter" };
  return { play: choose(message.board || {}, message.you || "X") };
}

// ---- JSON lines on stdin and stdout ----

const input = readline.createInterface({ input: process.stdin });
input.on("line", (line) => {
  const message = JSON.parse(line);
  const keys = Object.keys(message);
  if (keys.length === 1 && keys[0] === "error") {
    process.stderr.write(`${message.error}\n`);
    process.exit(0);
  }
  process.stdout.write(`${JSON.stringify(replyTo(message))}\n`);
});
