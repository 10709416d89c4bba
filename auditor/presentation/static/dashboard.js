// Hover tooltips for chart points: show the SVG <title> text next to the pointer at once
// (the browser's own title tooltip appears late and cannot be styled).
(function () {
  "use strict";
  var tip = document.createElement("div");
  tip.id = "tooltip";
  document.body.appendChild(tip);
  function textOf(target) {
    var node = target.closest("[data-point], [data-cell], [data-span]");
    if (!node) { return null; }
    var title = node.querySelector("title");
    return title ? title.textContent : null;
  }
  document.addEventListener("mouseover", function (event) {
    var text = event.target instanceof Element ? textOf(event.target) : null;
    if (!text) { tip.style.display = "none"; return; }
    tip.textContent = text;
    tip.style.display = "block";
  });
  document.addEventListener("mousemove", function (event) {
    tip.style.left = (event.clientX + 12) + "px";
    tip.style.top = (event.clientY + 12) + "px";
  });
})();
