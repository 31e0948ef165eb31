// The play page's "Add seat" / "Remove seat": seat inputs p1..pN within the game's range
// (data-min, data-max on #seat-list). The server reads whatever p1..pN it gets.
const list = document.getElementById("seat-list");
const add = document.getElementById("add-seat");
const remove = document.getElementById("remove-seat");

function rows() {
  return list.querySelectorAll(".seat-row");
}

function refresh() {
  const n = rows().length;
  add.disabled = n >= Number(list.dataset.max);
  remove.disabled = n <= Number(list.dataset.min);
}

add.addEventListener("click", () => {
  const n = rows().length;
  if (n >= Number(list.dataset.max)) return;
  const last = rows()[n - 1];
  const row = last.cloneNode(true);
  const label = row.querySelector("label");
  const input = row.querySelector("input");
  label.htmlFor = input.id = input.name = `p${n + 1}`;
  label.textContent = `Seat ${n}`;
  input.value = last.querySelector("input").value; // the same bot again, by default
  list.appendChild(row);
  input.focus();
  refresh();
});

remove.addEventListener("click", () => {
  const all = rows();
  if (all.length <= Number(list.dataset.min)) return;
  all[all.length - 1].remove();
  refresh();
});

refresh();
