// A starter bot for Arena's Tic-tac-toe, in Go (standard library only).
//
// Build and run (the platform does the same with the file you upload):
//
//	go build -o bot main.go
//	./bot          # JSON lines: one message per line on stdin, one reply per line on stdout
//
// The protocol (games/tictactoe/README.md): `init` comes once per match (the reply is
// ignored); `play-turn` asks for a move: `board` maps "r-c" keys to "", "X" or "O", `you`
// is your symbol. Reply {"play": "r-c"} naming an empty cell. A line {"error": ...} is the
// platform's last word. Strategy: win if you can, else block, else the centre, a corner,
// any cell. Put yours in choose().
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// ---- The game: Tic-tac-toe. Put your strategy in choose() ----

var lines = [8][3]string{
	{"0-0", "0-1", "0-2"}, {"1-0", "1-1", "1-2"}, {"2-0", "2-1", "2-2"},
	{"0-0", "1-0", "2-0"}, {"0-1", "1-1", "2-1"}, {"0-2", "1-2", "2-2"},
	{"0-0", "1-1", "2-2"}, {"0-2", "1-1", "2-0"},
}
var preference = []string{"1-1", "0-0", "0-2", "2-0", "2-2", "0-1", "1-0", "1-2", "2-1"}

// cell is the text of a board cell ("" when empty or missing).
func cell(board map[string]any, key string) string {
	value, _ := board[key].(string)
	return value
}

// completing is the empty cell that completes a line of symbol, or "" if there is none.
func completing(board map[string]any, symbol string) string {
	for _, line := range lines {
		mine, empty, gap := 0, 0, ""
		for _, key := range line {
			switch cell(board, key) {
			case symbol:
				mine++
			case "":
				empty++
				gap = key
			}
		}
		if mine == 2 && empty == 1 {
			return gap
		}
	}
	return ""
}

// choose: win if you can, else block, else the centre, a corner, any cell.
func choose(board map[string]any, me string) string {
	other := "X"
	if me == "X" {
		other = "O"
	}
	if move := completing(board, me); move != "" {
		return move
	}
	if move := completing(board, other); move != "" {
		return move
	}
	for _, key := range preference {
		if cell(board, key) == "" {
			return key
		}
	}
	return "0-0"
}

func replyTo(message map[string]any) any {
	if message["action"] == "init" {
		return map[string]any{"name": "starter"}
	}
	board, _ := message["board"].(map[string]any)
	me, ok := message["you"].(string)
	if !ok {
		me = "X"
	}
	return map[string]any{"play": choose(board, me)}
}

// ---- The line loop: one JSON message per line in, one JSON reply per line out ----
func main() {
	in := bufio.NewReader(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	for {
		line, err := in.ReadString('\n')
		if strings.TrimSpace(line) != "" {
			var message map[string]any
			if json.Unmarshal([]byte(line), &message) == nil {
				if text, isError := message["error"]; isError && len(message) == 1 {
					fmt.Fprintln(os.Stderr, text)
					return // the platform's last word
				}
				reply, _ := json.Marshal(replyTo(message))
				out.Write(reply)
				out.WriteByte('\n')
				out.Flush()
			}
		}
		if err == io.EOF {
			return
		} else if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return
		}
	}
}
