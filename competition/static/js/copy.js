// Copy buttons: <button data-copy="#selector">.
for (const button of document.querySelectorAll("[data-copy]")) {
  const label = button.textContent; // "Copy", "Share"...: shown again after the feedback
  button.addEventListener("click", async () => {
    const target = document.querySelector(button.dataset.copy);
    if (!target) return;
    try {
      await navigator.clipboard.writeText(target.value ?? target.textContent);
      button.textContent = "Copied";
    } catch {
      target.select?.();
      button.textContent = "Press Ctrl+C";
    }
    setTimeout(() => { button.textContent = label; }, 2000);
  });
}

// Fields that select their whole text on click: <input data-select-on-click>.
for (const field of document.querySelectorAll("[data-select-on-click]")) {
  field.addEventListener("click", () => field.select());
}

// Forms that ask before submitting: <form data-confirm="Question?">.
for (const form of document.querySelectorAll("form[data-confirm]")) {
  form.addEventListener("submit", (event) => {
    if (!window.confirm(form.dataset.confirm)) event.preventDefault();
  });
}
