/* A starter bot for Arena's Tic-tac-toe, in C17 (standard library only).
 *
 * Build and run (the platform does the same with the file you upload):
 *     gcc -std=c17 -O2 -o bot bot.c -lm
 *     ./bot          # JSON lines: one message per line on stdin, one reply per line on stdout
 *
 * The protocol (games/tictactoe/README.md): `init` comes once per match (the reply is
 * ignored); `play-turn` asks for a move: `board` maps "r-c" keys to "", "X" or "O", `you`
 * is your symbol. Reply {"play": "r-c"} naming an empty cell. A line {"error": ...} is the
 * platform's last word. Strategy: win if you can, else block, else the centre, a corner,
 * any cell. Put yours in choose(), below the JSON code.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- A compact JSON reader and string writer ---- */
typedef enum { J_NULL, J_BOOL, J_NUMBER, J_STRING, J_ARRAY, J_OBJECT } JType;

typedef struct Json {
    JType type;
    int boolean;
    double number;
    char *text;            /* J_STRING: the decoded text (UTF-8) */
    size_t count;          /* J_ARRAY, J_OBJECT: how many items */
    char **keys;           /* J_OBJECT: the key of each item */
    struct Json **items;
} Json;

typedef struct { const char *s; size_t i; int failed; } Reader;

static void space(Reader *r) { while (r->s[r->i] == ' ' || r->s[r->i] == '\t' || r->s[r->i] == '\n' || r->s[r->i] == '\r') r->i++; }

static Json *node(JType type) { Json *j = calloc(1, sizeof *j); if (!j) exit(1); j->type = type; return j; }

static void utf8(char *out, size_t *n, unsigned c) {
    if (c < 0x80) out[(*n)++] = (char)c;
    else if (c < 0x800) { out[(*n)++] = (char)(0xC0 | (c >> 6)); out[(*n)++] = (char)(0x80 | (c & 0x3F)); }
    else if (c < 0x10000) { out[(*n)++] = (char)(0xE0 | (c >> 12)); out[(*n)++] = (char)(0x80 | ((c >> 6) & 0x3F)); out[(*n)++] = (char)(0x80 | (c & 0x3F)); }
    else { out[(*n)++] = (char)(0xF0 | (c >> 18)); out[(*n)++] = (char)(0x80 | ((c >> 12) & 0x3F)); out[(*n)++] = (char)(0x80 | ((c >> 6) & 0x3F)); out[(*n)++] = (char)(0x80 | (c & 0x3F)); }
}

static unsigned hex4(Reader *r) {
    unsigned v = 0;
    for (int k = 0; k < 4; k++) {
        char c = r->s[r->i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0) { r->failed = 1; return 0; }
        v = v * 16 + (unsigned)d;
        r->i++;
    }
    return v;
}

static char *string(Reader *r) {
    size_t start = ++r->i, n = 0;  /* past the opening quote */
    while (r->s[r->i] && r->s[r->i] != '"') { if (r->s[r->i] == '\\' && r->s[r->i + 1]) r->i++; r->i++; }
    char *out = malloc(2 * (r->i - start) + 1);  /* decoded text is never longer than this */
    if (!out) exit(1);
    r->i = start;
    while (r->s[r->i] && r->s[r->i] != '"') {
        char c = r->s[r->i++];
        if (c != '\\') { out[n++] = c; continue; }
        char e = r->s[r->i++];
        switch (e) {
            case 'n': out[n++] = '\n'; break;
            case 't': out[n++] = '\t'; break;
            case 'r': out[n++] = '\r'; break;
            case 'b': out[n++] = '\b'; break;
            case 'f': out[n++] = '\f'; break;
            case 'u': {
                unsigned code = hex4(r);
                if (code >= 0xD800 && code < 0xDC00 && r->s[r->i] == '\\' && r->s[r->i + 1] == 'u') {
                    r->i += 2;
                    code = 0x10000 + ((code - 0xD800) << 10) + (hex4(r) - 0xDC00);
                }
                utf8(out, &n, code);
                break;
            }
            case '\0': r->failed = 1; r->i--; break;
            default: out[n++] = e; /* \" \\ \/ */
        }
    }
    if (r->s[r->i] != '"') r->failed = 1; else r->i++;
    out[n] = '\0';
    return out;
}

static Json *value(Reader *r);
static void free_json(Json *j);

static void add(Json *j, char *key, Json *item) {
    j->items = realloc(j->items, (j->count + 1) * sizeof *j->items);
    j->keys = realloc(j->keys, (j->count + 1) * sizeof *j->keys);
    if (!j->items || !j->keys) exit(1);
    j->items[j->count] = item;
    j->keys[j->count++] = key;
}

static Json *value(Reader *r) {
    space(r);
    const char *p = r->s + r->i;
    if (*p == '{' || *p == '[') {
        int object = *p == '{';
        char close = object ? '}' : ']';
        Json *j = node(object ? J_OBJECT : J_ARRAY);
        r->i++;
        space(r);
        if (r->s[r->i] == close) { r->i++; return j; }
        while (!r->failed) {
            char *key = NULL;
            if (object) {
                space(r);
                if (r->s[r->i] != '"') { r->failed = 1; break; }
                key = string(r);
                space(r);
                if (r->s[r->i] != ':') { r->failed = 1; free(key); break; }
                r->i++;
            }
            add(j, key, value(r));
            space(r);
            if (r->s[r->i] == ',') { r->i++; continue; }
            if (r->s[r->i] == close) { r->i++; return j; }
            r->failed = 1;
        }
        return j;
    }
    if (*p == '"') { Json *j = node(J_STRING); j->text = string(r); return j; }
    if (strncmp(p, "true", 4) == 0) { Json *j = node(J_BOOL); j->boolean = 1; r->i += 4; return j; }
    if (strncmp(p, "false", 5) == 0) { r->i += 5; return node(J_BOOL); }
    if (strncmp(p, "null", 4) == 0) { r->i += 4; return node(J_NULL); }
    char *end;
    Json *j = node(J_NUMBER);
    j->number = strtod(p, &end);
    if (end == p) r->failed = 1;
    r->i += (size_t)(end - p);
    return j;
}

/* The value of `text`, or NULL if it is not exactly one JSON value. */
static Json *parse_json(const char *text) {
    Reader r = {text, 0, 0};
    Json *j = value(&r);
    space(&r);
    if (r.failed || text[r.i]) { free_json(j); return NULL; }
    return j;
}

static void free_json(Json *j) {
    if (!j) return;
    for (size_t k = 0; k < j->count; k++) { free_json(j->items[k]); if (j->keys) free(j->keys[k]); }
    free(j->items);
    free(j->keys);
    free(j->text);
    free(j);
}

/* The item under `key` of an object (the last one if repeated), or NULL. */
static const Json *get(const Json *j, const char *key) {
    const Json *found = NULL;
    if (j && j->type == J_OBJECT)
        for (size_t k = 0; k < j->count; k++) if (strcmp(j->keys[k], key) == 0) found = j->items[k];
    return found;
}

/* The text of a string value, or `otherwise`. */
static const char *str(const Json *j, const char *otherwise) { return j && j->type == J_STRING ? j->text : otherwise; }

/* Write `text` as a JSON string. */
static void put_string(FILE *out, const char *text) {
    fputc('"', out);
    for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
        if (*c == '"' || *c == '\\') fprintf(out, "\\%c", *c);
        else if (*c < 0x20) fprintf(out, "\\u%04x", *c);
        else fputc(*c, out);
    }
    fputc('"', out);
}
/* ---- end of the JSON code ---- */

/* ---- The game: Tic-tac-toe. Put your strategy in choose() ---- */
static const char *LINES[8][3] = {
    {"0-0", "0-1", "0-2"}, {"1-0", "1-1", "1-2"}, {"2-0", "2-1", "2-2"},
    {"0-0", "1-0", "2-0"}, {"0-1", "1-1", "2-1"}, {"0-2", "1-2", "2-2"},
    {"0-0", "1-1", "2-2"}, {"0-2", "1-1", "2-0"},
};
static const char *PREFERENCE[9] = {"1-1", "0-0", "0-2", "2-0", "2-2", "0-1", "1-0", "1-2", "2-1"};

/* The empty cell that completes a line of `symbol`, or NULL if there is none. */
static const char *completing(const Json *board, const char *symbol) {
    for (int l = 0; l < 8; l++) {
        int mine = 0, empty = 0;
        const char *gap = NULL;
        for (int k = 0; k < 3; k++) {
            const char *value = str(get(board, LINES[l][k]), "");
            if (strcmp(value, symbol) == 0) mine++;
            else if (value[0] == '\0') { empty++; gap = LINES[l][k]; }
        }
        if (mine == 2 && empty == 1) return gap;
    }
    return NULL;
}

/* Win if you can, else block, else the centre, a corner, any cell. */
static const char *choose(const Json *board, const char *me) {
    const char *other = strcmp(me, "X") == 0 ? "O" : "X";
    const char *move = completing(board, me);
    if (!move) move = completing(board, other);
    if (move) return move;
    for (int k = 0; k < 9; k++) if (str(get(board, PREFERENCE[k]), "")[0] == '\0') return PREFERENCE[k];
    return "0-0";
}

static void reply_to(const Json *message, FILE *out) {
    if (strcmp(str(get(message, "action"), ""), "init") == 0) {
        fputs("{\"name\":", out);
        put_string(out, "starter");
    } else {
        fputs("{\"play\":", out);
        put_string(out, choose(get(message, "board"), str(get(message, "you"), "X")));
    }
    fputs("}\n", out);
}

/* ---- The line loop: one JSON message per line in, one JSON reply per line out ---- */
static char *read_line(FILE *in) {
    size_t size = 4096, n = 0;
    char *line = malloc(size);
    int c;
    if (!line) exit(1);
    while ((c = getc(in)) != EOF && c != '\n') {
        if (n + 1 >= size && !(line = realloc(line, size *= 2))) exit(1);
        line[n++] = (char)c;
    }
    if (c == EOF && n == 0) { free(line); return NULL; }
    if (n && line[n - 1] == '\r') n--;
    line[n] = '\0';
    return line;
}

int main(void) {
    char *line;
    while ((line = read_line(stdin)) != NULL) {
        Json *message = line[0] ? parse_json(line) : NULL;
        free(line);
        if (!message) continue;  /* a blank line or not JSON: nothing to answer */
        if (message->type == J_OBJECT && message->count == 1 && strcmp(message->keys[0], "error") == 0) {
            fprintf(stderr, "%s\n", str(message->items[0], "error"));
            free_json(message);
            break;  /* the platform's last word */
        }
        reply_to(message, stdout);
        fflush(stdout);
        free_json(message);
    }
    return 0;
}
