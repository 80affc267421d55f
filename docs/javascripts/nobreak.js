// specfmt docs: an option, field or path in inline code (`--aux-layer-ids`) is never split
// over two lines; browsers break after every hyphen, so each word of an inline code span is
// set in a span that does not wrap (a code span with spaces still wraps at its spaces, and
// the text copied is the same). A word wider than the column itself keeps the theme's
// breaking, so nothing is cut off. tests/test_docs_browser.py checks it at 1280 and 800 px.
(() => {
  const keepWhole = root => {
    for (const code of root.querySelectorAll(".md-typeset :not(pre) > code:not(.nobreak-done)")) {
      code.classList.add("nobreak-done");
      if (code.children.length) continue;  // highlighted or already split: left as it is
      const words = code.textContent.split(/(\s+)/);
      code.textContent = "";
      for (const word of words) {
        if (!word) continue;
        if (/^\s+$/.test(word)) {
          code.append(word);
          continue;
        }
        const span = document.createElement("span");
        span.className = "nobreak";
        span.textContent = word;
        code.append(span);
      }
      const column = code.closest("article, td, th, li, p") || code.parentElement;
      for (const span of code.querySelectorAll(".nobreak"))
        if (span.getBoundingClientRect().width > column.clientWidth) span.className = "";
    }
  };
  if (typeof document$ !== "undefined") document$.subscribe(() => keepWhole(document));
  else document.addEventListener("DOMContentLoaded", () => keepWhole(document));
})();
