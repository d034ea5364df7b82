// iclr25's tables (ci/docs/build_site.py copies this file): a click on a column's heading sorts the rows by it
// (numbers as numbers), and every table of more than 8 rows gets a box that keeps only the rows containing its
// text. No library and no network.
(function () {
  "use strict";

  function cellValue(row, i) {
    const cell = row.cells[i];
    return cell ? cell.textContent.trim() : "";
  }

  function asNumber(text) {
    const m = text.replace(/[✓✗]/g, "").match(/^[-+−]?\d*\.?\d+(e[-+]?\d+)?/i);
    return m ? parseFloat(m[0].replace("−", "-")) : NaN;
  }

  function sortBy(table, i, th) {
    const body = table.tBodies[0];
    if (!body) return;
    const ascending = th.getAttribute("aria-sort") !== "ascending";
    for (const h of table.tHead.rows[0].cells) h.removeAttribute("aria-sort");
    th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    const rows = Array.from(body.rows);
    rows.sort(function (a, b) {
      const x = cellValue(a, i), y = cellValue(b, i);
      const nx = asNumber(x), ny = asNumber(y);
      const c = !isNaN(nx) && !isNaN(ny) ? nx - ny : x.localeCompare(y, undefined, {numeric: true});
      return ascending ? c : -c;
    });
    for (const r of rows) body.appendChild(r);
  }

  function addFilter(table) {
    const body = table.tBodies[0];
    if (!body || body.rows.length <= 8) return;
    const box = document.createElement("input");
    box.type = "search";
    box.className = "iclr25-filter";
    box.placeholder = "Filter these " + body.rows.length + " rows (package, claim, verdict, ...)";
    box.setAttribute("aria-label", "filter the table's rows");
    box.addEventListener("input", function () {
      const q = box.value.trim().toLowerCase();
      for (const r of body.rows) r.hidden = q !== "" && !r.textContent.toLowerCase().includes(q);
    });
    const wrap = table.closest(".md-typeset__table") || table;
    wrap.parentNode.insertBefore(box, wrap);
  }

  function setUp() {
    for (const table of document.querySelectorAll(".md-typeset table:not([class])")) {
      if (!table.tHead || table.dataset.iclr25) continue;
      table.dataset.iclr25 = "1";
      Array.from(table.tHead.rows[0].cells).forEach(function (th, i) {
        th.title = "sort by this column";
        th.addEventListener("click", function () { sortBy(table, i, th); });
      });
      addFilter(table);
    }
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", setUp);
  else setUp();
})();
