// The bell on every page: the unread count, updated as new notifications arrive over
// ws/notifications/ (a snapshot with the count, then one message per notification).
import { Reconnecting } from "./ws.js";

const count = document.getElementById("bell-count");
const bell = document.getElementById("bell");

function show(unread) {
  if (!count) return;
  count.textContent = String(unread);
  count.hidden = unread === 0;
  if (bell) bell.setAttribute("aria-label", `Notifications: ${unread} unread`);
}

if (count) {
  new Reconnecting("/ws/notifications/", {
    fatalCodes: [4401, 4400, 4403, 4404],
    onMessage(msg) {
      if (msg.type === "snapshot" || msg.type === "notification") show(msg.unread);
      if (msg.type === "notification") {
        document.dispatchEvent(new CustomEvent("arena:notification", { detail: msg.notification }));
      }
    },
  }).start();
}
