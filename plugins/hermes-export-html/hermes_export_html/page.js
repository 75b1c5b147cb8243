// Hermes sessions export page: theme toggle, sidebar switching and search.
// It never builds markup from session data: it only shows and hides what the page holds.
(function () {
  "use strict";
  var root = document.documentElement;
  root.classList.add("js");

  var themes = ["auto", "light", "dark"];
  var toggle = document.getElementById("theme-toggle");
  function applyTheme(theme) {
    if (theme === "auto") {
      root.removeAttribute("data-theme");
    } else {
      root.setAttribute("data-theme", theme);
    }
    toggle.setAttribute("data-state", theme);
    toggle.textContent = "Theme: " + theme;
  }
  var saved = "auto";
  try {
    saved = window.localStorage.getItem("hermes-export-theme") || "auto";
  } catch (error) {
    saved = "auto";
  }
  applyTheme(themes.indexOf(saved) >= 0 ? saved : "auto");
  toggle.addEventListener("click", function () {
    var next = themes[(themes.indexOf(toggle.getAttribute("data-state")) + 1) % themes.length];
    applyTheme(next);
    try {
      window.localStorage.setItem("hermes-export-theme", next);
    } catch (error) {
      // Storage can be unavailable for local files; the toggle still works for this visit.
    }
  });

  var sections = Array.prototype.slice.call(document.querySelectorAll("section.session"));
  var picks = Array.prototype.slice.call(document.querySelectorAll("button.pick"));
  function show(anchor) {
    sections.forEach(function (section) {
      section.classList.toggle("active", section.id === anchor);
    });
    picks.forEach(function (pick) {
      pick.setAttribute("aria-pressed", pick.getAttribute("data-target") === anchor ? "true" : "false");
    });
    window.scrollTo(0, 0);
  }
  picks.forEach(function (pick) {
    pick.addEventListener("click", function () {
      show(pick.getAttribute("data-target"));
    });
  });

  var search = document.getElementById("search");
  var counter = document.getElementById("match-count");
  var haystacks = null;
  if (search) {
    search.addEventListener("input", function () {
      if (haystacks === null) {
        haystacks = {};
        sections.forEach(function (section) {
          haystacks[section.id] = section.textContent.toLowerCase();
        });
      }
      var query = search.value.trim().toLowerCase();
      var shown = 0;
      picks.forEach(function (pick) {
        var target = pick.getAttribute("data-target");
        var hit = query === "" ||
          pick.textContent.toLowerCase().indexOf(query) >= 0 ||
          (haystacks[target] || "").indexOf(query) >= 0;
        pick.parentNode.hidden = !hit;
        if (hit) {
          shown += 1;
        }
      });
      counter.textContent = query === "" ? "" : shown + " of " + picks.length + " sessions";
    });
  }
})();
