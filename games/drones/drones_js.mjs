#!/usr/bin/env node
// Host adapter: serves an unmodified 2018 Game of Drones JavaScript bot file over the
// Arena wire protocol (games/drones/README.md §5, §5.5). Node >= 18, no dependencies.
//
//   node games/drones/drones_js.mjs BOT_FILE                    # line protocol on stdin/stdout
//   node games/drones/drones_js.mjs BOT_FILE --http HOST:PORT   # HTTP server (port 0: any free)
//
// A request is {"calls": [[method, argument], ...]} (plus "final": true for the last one of a
// match); each call is made on the bot object if it has such a method, in order, with `this`
// bound to the bot; the reply is JSON.stringify(playTurn's return value), or null.
// Everything else (meta, exceptions, the bot's console output) goes to stderr.

import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import * as nodeModule from 'node:module';
import path from 'node:path';
import readline from 'node:readline';
import { pathToFileURL } from 'node:url';
import vm from 'node:vm';

const USAGE = 'usage: node drones_js.mjs BOT_FILE [--http HOST:PORT]';
const MAX_BODY = 1 << 20; // bytes of one HTTP request
const IDLE_MS = 30 * 60 * 1000; // HTTP: drop a (match, seat) instance unused this long
const MAX_SKEW_S = 300; // HTTP with ARENA_BOT_SECRET: accepted age of X-Arena-Timestamp

// stdout carries the protocol only: a bot's console.log/info/debug goes to stderr.
for (const name of ['log', 'info', 'debug']) console[name] = console.error.bind(console);

function log(...args) {
  console.error('[drones_js]', ...args);
}

function describe(err) {
  return err && err.stack ? err.stack : String(err);
}

// -- loading (§5.5.1) --------------------------------------------------------------------

/** Is `source` valid CommonJS (a script with no import/export statements)? */
function parsesAsCommonJS(source, filename) {
  const body = source.startsWith('#!') ? '//' + source.slice(2) : source;
  try {
    new vm.Script(`(function (exports, require, module, __filename, __dirname) {${body}\n})`, {
      filename,
    });
    return true;
  } catch {
    return false;
  }
}

/** Import `url` as an ES module, whatever its extension and package scope say. */
async function importAsModule(url, source) {
  if (typeof nodeModule.register === 'function' && !process.env.DRONES_JS_NO_HOOKS) {
    // Node >= 18.19 / 20.6: a load hook gives the file the "module" format at its real URL,
    // so import.meta.url, stack traces and relative imports stay right.
    const hooks = `
      let targets = new Set();
      export function initialize(data) { targets = new Set(data.targets); }
      export async function load(url, context, nextLoad) {
        if (targets.has(url)) return nextLoad(url, { ...context, format: 'module' });
        return nextLoad(url, context);
      }`;
    nodeModule.register('data:text/javascript,' + encodeURIComponent(hooks), {
      data: { targets: [url] },
    });
    return import(url);
  }
  // Older Node (or DRONES_JS_NO_HOOKS set): evaluate the source from a data: URL; relative
  // imports of the bot cannot resolve there.
  return import('data:text/javascript;base64,' + Buffer.from(source).toString('base64'));
}

/** The bot file's default export D (ES module, or CommonJS module.exports). */
async function loadBotExport(file) {
  const absolute = path.resolve(file);
  const url = pathToFileURL(absolute).href;
  const source = readFileSync(absolute, 'utf8');
  const ext = path.extname(absolute).toLowerCase();
  const commonjs = ext === '.cjs' || (ext !== '.mjs' && parsesAsCommonJS(source, absolute));
  if (commonjs) {
    const require = nodeModule.createRequire(absolute);
    let exported;
    try {
      exported = require(absolute);
    } catch (err) {
      if (err && err.code === 'ERR_REQUIRE_ESM') return pickDefault(await importAsModule(url, source));
      throw err;
    }
    if (exported && exported.__esModule && 'default' in exported) return exported.default;
    return exported;
  }
  return pickDefault(await importAsModule(url, source));
}

function pickDefault(namespace) {
  // No default export: the module's named exports act as the bot's methods.
  return namespace.default !== undefined ? namespace.default : { ...namespace };
}

// -- instances and calls (§5.5.2-4) ------------------------------------------------------

function isClass(fn) {
  return /^class[\s{]/.test(Function.prototype.toString.call(fn));
}

/** A new bot: `new D()` for a class, `D()` for a function, else D itself. */
function instantiate(D) {
  try {
    let bot;
    if (typeof D === 'function') bot = isClass(D) ? new D() : D();
    else bot = D;
    if (bot === null || (typeof bot !== 'object' && typeof bot !== 'function')) {
      log(`the bot is ${bot === null ? 'null' : typeof bot}: every call will be skipped`);
    }
    return bot;
  } catch (err) {
    log('creating the bot failed:', describe(err));
    return undefined;
  }
}

function metaOf(bot) {
  if (bot && typeof bot.meta === 'object' && bot.meta !== null) return bot.meta;
  return null;
}

/** One seat of one match: the bot instance and how to answer a request. */
class Seat {
  constructor(D) {
    this.D = D;
    this.bot = undefined;
    this.created = false;
    this.used = Date.now();
  }

  /** The reply text to one request (a parsed JSON value). */
  handle(request) {
    this.used = Date.now();
    const calls = request && typeof request === 'object' && Array.isArray(request.calls)
      ? request.calls
      : null;
    if (calls === null) {
      log('a request without a "calls" list:', JSON.stringify(request)?.slice(0, 200));
      return 'null';
    }
    let reply;
    for (const call of calls) {
      if (!Array.isArray(call) || typeof call[0] !== 'string') {
        log('skipping a malformed call:', JSON.stringify(call)?.slice(0, 200));
        continue;
      }
      const [method, argument] = call;
      if (method === 'onMatchStart' || !this.created) {
        this.bot = instantiate(this.D);
        this.created = true;
      }
      const bot = this.bot;
      if (bot === null || bot === undefined || typeof bot[method] !== 'function') continue;
      try {
        const result = bot[method].call(bot, argument);
        if (method === 'playTurn') reply = result;
      } catch (err) {
        log(`${method} threw:`, describe(err));
        if (method === 'playTurn') reply = undefined;
      }
    }
    if (request.final === true || reply === undefined) return 'null';
    try {
      const text = JSON.stringify(reply);
      return text === undefined ? 'null' : text;
    } catch (err) {
      log('the reply cannot be written as JSON:', describe(err));
      return 'null';
    }
  }
}

// -- the two servers ---------------------------------------------------------------------

function serveLines(D) {
  const seat = new Seat(D);
  const input = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  process.stdout.on('error', (err) => {
    if (err.code === 'EPIPE') process.exit(0);
    throw err;
  });
  input.on('line', (line) => {
    if (line.trim() === '') return;
    let request;
    try {
      request = JSON.parse(line);
    } catch (err) {
      log('a request line that is not JSON:', line.slice(0, 200));
      process.stdout.write('null\n');
      return;
    }
    process.stdout.write(seat.handle(request) + '\n');
  });
  input.on('close', () => process.exit(0));
}

function verify(secret, headers, body) {
  const timestamp = String(headers['x-arena-timestamp'] || '');
  const given = String(headers['x-arena-signature'] || '');
  if (!/^\d+$/.test(timestamp) || Math.abs(Date.now() / 1000 - Number(timestamp)) > MAX_SKEW_S) {
    return false;
  }
  const expected = 'sha256=' + createHmac('sha256', secret).update(timestamp + '.').update(body).digest('hex');
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

function serveHttp(D, host, port, meta) {
  const seats = new Map(); // "match\0seat" -> Seat
  const secret = process.env.ARENA_BOT_SECRET || '';
  const sweep = setInterval(() => {
    const now = Date.now();
    for (const [key, seat] of seats) if (now - seat.used > IDLE_MS) seats.delete(key);
  }, 60_000);
  sweep.unref();

  const server = http.createServer((req, res) => {
    const send = (status, text) => {
      res.writeHead(status, {
        'Content-Type': 'application/json',
        'Content-Length': Buffer.byteLength(text),
      });
      res.end(text);
    };
    if (req.method === 'GET') {
      send(200, JSON.stringify({ ok: true, meta, instances: seats.size }));
      return;
    }
    if (req.method !== 'POST') {
      send(405, JSON.stringify({ error: 'POST a request' }));
      return;
    }
    const chunks = [];
    let size = 0;
    let refused = false;
    req.on('data', (chunk) => {
      size += chunk.length;
      if (size > MAX_BODY && !refused) {
        refused = true;
        send(413, JSON.stringify({ error: 'request too large' }));
        req.destroy();
      }
      if (!refused) chunks.push(chunk);
    });
    req.on('end', () => {
      if (refused) return;
      const body = Buffer.concat(chunks);
      if (secret && !verify(secret, req.headers, body)) {
        send(401, JSON.stringify({ error: 'bad or missing X-Arena-Signature' }));
        return;
      }
      let request;
      try {
        request = JSON.parse(body.toString('utf8'));
      } catch {
        send(400, JSON.stringify({ error: 'the body is not JSON' }));
        return;
      }
      const key = `${req.headers['x-arena-match'] ?? ''}\u0000${req.headers['x-arena-seat'] ?? ''}`;
      let seat = seats.get(key);
      if (seat === undefined) {
        seat = new Seat(D);
        seats.set(key, seat);
      }
      const reply = seat.handle(request);
      if (request && request.final === true) seats.delete(key);
      send(200, reply);
    });
  });
  server.keepAliveTimeout = 65_000;
  server.listen(port, host, () => {
    const address = server.address();
    const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    log(`listening on http://${shown}:${address.port}/`);
  });
  // No SIGTERM/SIGINT handler: the default ends the process at once, even inside a bot
  // that loops (requests are answered synchronously, so nothing is ever half done).
}

// -- main ----------------------------------------------------------------------------------

function parseArgs(argv) {
  let file = null;
  let listen = null;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--http') listen = argv[++i] ?? '';
    else if (arg.startsWith('--http=')) listen = arg.slice('--http='.length);
    else if (arg === '-h' || arg === '--help') return null;
    else if (file === null) file = arg;
    else return null;
  }
  if (file === null) return null;
  if (listen === null) return { file, listen: null };
  const match = /^(?:\[([^\]]+)\]|([^:]*)):(\d+)$/.exec(listen);
  if (!match) return null;
  return { file, listen: { host: match[1] ?? (match[2] || '127.0.0.1'), port: Number(match[3]) } };
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  if (args === null) {
    console.error(USAGE);
    process.exit(2);
  }
  let D;
  try {
    D = await loadBotExport(args.file);
  } catch (err) {
    log(`cannot load ${args.file}:`, describe(err));
    process.exit(1);
  }
  const meta = metaOf(instantiate(D));
  log('bot:', JSON.stringify(meta ?? { name: path.basename(args.file) }));
  if (args.listen) serveHttp(D, args.listen.host, args.listen.port, meta);
  else serveLines(D);
}

main();
