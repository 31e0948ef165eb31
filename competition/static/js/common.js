// Shared drawing helpers for the game renderers, the viewer and the big screen.

export const SEAT_COLORS = ["#e4574f", "#4f8fe4"];
export const INK = "#e8ecf7";
export const MUTED = "#9aa4c0";
export const BG = "#0b0f1a";
export const PANEL = "#171c2e";
export const ACCENT = "#ffb347";
export const GOLD = "#ffd27a";
const FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';

export const clamp = (v, lo, hi) => Math.max(lo, Math.min(hi, v));

/** Size the canvas backing store to its CSS box and return a context in CSS pixels. */
export function setupCanvas(canvas) {
  const dpr = Math.min(window.devicePixelRatio || 1, 3);
  const w = Math.max(1, canvas.clientWidth);
  const h = Math.max(1, canvas.clientHeight);
  const bw = Math.round(w * dpr);
  const bh = Math.round(h * dpr);
  if (canvas.width !== bw || canvas.height !== bh) {
    canvas.width = bw;
    canvas.height = bh;
  }
  const ctx = canvas.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, w, h);
  return { ctx, w, h };
}

export function font(px, weight = 600) {
  return `${weight} ${Math.max(6, Math.round(px))}px ${FONT}`;
}

/** Set the largest font (at most px) for which text fits in maxWidth; returns the size. */
export function fitFont(ctx, text, maxWidth, px, weight = 600, min = 8) {
  let size = px;
  ctx.font = font(size, weight);
  while (size > min && ctx.measureText(text).width > maxWidth) {
    size -= 1;
    ctx.font = font(size, weight);
  }
  return size;
}

/** Text cut with an ellipsis to fit maxWidth (with the current font). */
export function ellipsize(ctx, text, maxWidth) {
  text = String(text ?? "");
  if (ctx.measureText(text).width <= maxWidth) return text;
  let lo = 0;
  let hi = text.length;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (ctx.measureText(text.slice(0, mid) + "…").width <= maxWidth) lo = mid;
    else hi = mid - 1;
  }
  return text.slice(0, lo) + "…";
}

export function roundRect(ctx, x, y, w, h, r) {
  r = Math.max(0, Math.min(r, w / 2, h / 2));
  ctx.beginPath();
  ctx.moveTo(x + r, y);
  ctx.arcTo(x + w, y, x + w, y + h, r);
  ctx.arcTo(x + w, y + h, x, y + h, r);
  ctx.arcTo(x, y + h, x, y, r);
  ctx.arcTo(x, y, x + w, y, r);
  ctx.closePath();
}

/** A match's reason in words: the server's ``reason_text`` (the game's reason catalogue),
 * never the raw code. */
export const reasonText = (match) => String(match?.reason_text || "");

export const DONE = new Set(["finished", "forfeited", "cancelled", "errored", "limit"]);
export const isDone = (match) => Boolean(match && DONE.has(match.status));

/** "X wins (three in a row)", "Draw (board full)", "O wins, X forfeited (did not answer in time)";
 *  ``illegal``: the game's words for an illegal reply's codes (``Game.illegal``). */
export function resultText(match, lastTurn, labels, illegal) {
  if (!isDone(match)) return null;
  if (match.status === "cancelled") return "Cancelled";
  if (match.status === "errored") return "Voided (platform error)";
  if (match.status === "limit") return `Stopped, no result (${reasonText(match) || "platform limit"})`;
  const parts = match.participants || [];
  const label = (seat) => labels?.[seat] ?? parts[seat]?.name ?? `Seat ${seat}`;
  let forfeited = lastTurn?.forfeited?.length ? lastTurn.forfeited : parts.filter((p) => p.cause).map((p) => p.seat);
  const fault = (seat) => { // in words: the fault catalogue's (``cause_text``), never the code
    const code = parts[seat]?.cause || lastTurn?.faults?.[seat] || "";
    const words = parts[seat]?.cause_text || "a fault";
    const detail = lastTurn?.details?.[seat];
    // an illegal reply's detail is the game's code: its words from the game's catalogue
    // (``illegal``, the viewer's config), else the code spelled out
    const why = illegal?.[detail] ?? String(detail ?? "").replaceAll("_", " ");
    return code === "illegal" && detail ? `${words}: ${why}` : words;
  };
  if (match.status === "forfeited" || forfeited.length) {
    if (forfeited.length >= parts.length && parts.length) return `Draw, both forfeited (${fault(0)} / ${fault(1)})`;
    const winner = parts.find((p) => p.result === "win");
    const loser = forfeited[0];
    return `${winner ? label(winner.seat) + " wins, " : ""}${label(loser)} forfeited (${fault(loser)})`;
  }
  const winners = parts.filter((p) => p.result === "win");
  if (winners.length === 1) return `${label(winners[0].seat)} wins (${reasonText(match)})`;
  return `Draw (${reasonText(match)})`;
}

/** A banner across the canvas: a dark band with large centred text. */
export function drawBanner(ctx, text, x, y, w, h, color = GOLD) {
  ctx.save();
  ctx.fillStyle = "rgba(11,15,26,0.88)";
  roundRect(ctx, x, y, w, h, Math.min(12, h / 3));
  ctx.fill();
  ctx.strokeStyle = color;
  ctx.lineWidth = 2;
  ctx.stroke();
  ctx.fillStyle = color;
  ctx.textAlign = "center";
  ctx.textBaseline = "middle";
  const target = h * 0.55;
  let size = fitFont(ctx, text, w - 20, target, 800);
  const cut = splitPoint(text);
  if (size < target * 0.62 && cut > 0) {
    // too small on one line: two lines, split at the clause nearest the middle
    const lines = [text.slice(0, cut).trim(), text.slice(cut).trim()];
    const longest = lines.reduce((a, b) => (b.length > a.length ? b : a));
    size = Math.min(fitFont(ctx, longest, w - 20, h * 0.36, 800), h * 0.36);
    ctx.font = font(size, 800);
    ctx.fillText(lines[0], x + w / 2, y + h / 2 - size * 0.58);
    ctx.fillText(lines[1], x + w / 2, y + h / 2 + size * 0.62);
  } else {
    ctx.font = font(size, 800);
    ctx.fillText(text, x + w / 2, y + h / 2 + 1);
  }
  ctx.restore();
}

/** Where to break a banner in two: after the ":" or "," nearest the middle, else a space. */
function splitPoint(text) {
  const mid = text.length / 2;
  let best = -1;
  for (const sep of [": ", ", ", " "]) {
    for (let i = text.indexOf(sep); i >= 0; i = text.indexOf(sep, i + 1)) {
      if (best < 0 || Math.abs(i - mid) < Math.abs(best - mid)) best = i + sep.length - 1;
    }
    if (best >= 0 && Math.abs(best - mid) < text.length * 0.3) return best + 1;
  }
  return best >= 0 ? best + 1 : -1;
}

/** A display number: integral values as they are, others rounded ("≈3"). */
export function displayNumber(n) {
  if (typeof n !== "number" || !Number.isFinite(n)) return String(n);
  if (Number.isInteger(n)) return String(n);
  if (Math.abs(n) >= 1e6) return "≈" + n.toExponential(2);
  return "≈" + Math.round(n);
}

export function exactNumber(n) {
  return typeof n === "number" ? String(n) : String(n);
}

/** Participant names from a match summary (seat order). */
export function namesOf(match) {
  return (match?.participants || []).map((p) => p.name);
}

/** Runs fn every animation frame for ms milliseconds with t in [0, 1]; returns a stopper. */
export function animate(ms, fn) {
  const start = performance.now();
  let raf = 0;
  let stopped = false;
  const step = (now) => {
    if (stopped) return;
    const t = Math.min(1, (now - start) / ms);
    fn(t);
    if (t < 1) raf = requestAnimationFrame(step);
  };
  raf = requestAnimationFrame(step);
  return () => {
    stopped = true;
    cancelAnimationFrame(raf);
  };
}

/** The position of a pointer event in the canvas' CSS pixels. */
export function pointer(canvas, event) {
  const rect = canvas.getBoundingClientRect();
  return [event.clientX - rect.left, event.clientY - rect.top];
}
