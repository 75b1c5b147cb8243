// hermes serve: search as you type, the list's filters, live list and session, paging,
// keyboard, and (with --allow-writes) rename/pin/archive. Never builds markup from session
// data: every fragment it shows comes from the server, escaped there.
(function () {
  "use strict";

  function meta(name) {
    var found = document.querySelector('meta[name="' + name + '"]');
    return found ? found.getAttribute("content") : "";
  }
  var csrf = meta("hermes-csrf");

  function request(url, options) {
    return fetch(url, options || { credentials: "same-origin" }).then(function (response) {
      return response.json().then(function (body) {
        if (!response.ok) {
          throw new Error(body.error || "HTTP " + response.status);
        }
        return body;
      });
    });
  }

  function post(url, payload) {
    return request(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-Hermes-CSRF": csrf },
      body: JSON.stringify(payload)
    });
  }

  function say(id, message) {
    var place = document.getElementById(id);
    if (place) {
      place.textContent = message;
    }
  }

  // ---------------------------------------------------------------- the list and search
  var form = document.getElementById("filters");
  var rows = document.getElementById("rows");
  var box = document.getElementById("q");
  var fingerprint = "";
  var asked = 0;

  function filterQuery() {
    var params = new URLSearchParams();
    Array.prototype.forEach.call(form.elements, function (field) {
      if (!field.name || field.name === "q" || field.name === "role") {
        return;
      }
      if (field.type === "checkbox") {
        if (field.checked) {
          params.append(field.name, field.value);
        }
      } else if (field.value) {
        params.append(field.name, field.value);
      }
    });
    return params;
  }

  function show(body, keepSelection) {
    var chosen = selectedRow();
    var chosenId = chosen ? chosen.getAttribute("data-id") : null;
    rows.innerHTML = body.html;
    say("status", body.status);
    if (keepSelection && chosenId) {
      var again = rows.querySelector('li.row[data-id="' + CSS.escape(chosenId) + '"]');
      if (again) {
        again.classList.add("selected");
      }
    }
  }

  function refresh(live) {
    var query = box.value.trim();
    var params = filterQuery();
    var ticket = ++asked;
    var url;
    if (query) {
      if (live) {
        return;
      }
      params.append("q", query);
      Array.prototype.forEach.call(form.querySelectorAll('input[name="role"]:checked'), function (role) {
        params.append("role", role.value);
      });
      url = "/api/search?" + params.toString();
    } else {
      if (live && fingerprint) {
        params.append("known", fingerprint);
      }
      url = "/api/list?" + params.toString();
    }
    request(url).then(function (body) {
      if (ticket !== asked) {
        return; // an answer to an older question
      }
      if (!query) {
        fingerprint = body.fingerprint;
        if (body.unchanged) {
          return;
        }
      } else {
        fingerprint = "";
      }
      show(body, live);
    }).catch(function (error) {
      if (ticket === asked) {
        say("status", error.message);
      }
    });
  }

  if (form && rows && box) {
    var pending = null;
    box.addEventListener("input", function () {
      window.clearTimeout(pending);
      pending = window.setTimeout(function () { refresh(false); }, 120);
    });
    form.addEventListener("change", function (event) {
      if (event.target !== box) {
        var params = filterQuery();
        var shown = params.toString();
        window.history.replaceState(null, "", shown ? "/?" + shown : "/");
        refresh(false);
      }
    });
    form.addEventListener("submit", function (event) {
      event.preventDefault();
    });
    window.setInterval(function () {
      if (!document.hidden) {
        refresh(true);
      }
    }, 2000);
    if (window.location.hash === "#search") {
      box.focus();
    }
  }

  // ---------------------------------------------------------------- one session
  var messages = document.getElementById("messages");
  var more = document.getElementById("more");
  var loading = false;

  function numberOf(name) {
    return parseInt(messages.getAttribute("data-" + name), 10) || 0;
  }

  function sessionUrl(tail) {
    return "/api/session/" + encodeURIComponent(messages.getAttribute("data-session")) + tail;
  }

  function updateMore() {
    var left = numberOf("total") - numberOf("offset");
    more.hidden = left <= 0;
    more.textContent = "Load more (" + Math.max(left, 0) + " left)";
  }

  function loadMore() {
    if (loading || numberOf("offset") >= numberOf("total")) {
      return;
    }
    loading = true;
    request(sessionUrl("/page?offset=" + numberOf("offset"))).then(function (body) {
      messages.insertAdjacentHTML("beforeend", body.html);
      messages.setAttribute("data-offset", String(body.offset));
      messages.setAttribute("data-total", String(body.total));
      if (body.last !== null) {
        messages.setAttribute("data-last", String(body.last));
      }
      updateMore();
    }).catch(function (error) {
      say("live", error.message);
    }).then(function () {
      loading = false;
    });
  }

  function follow() {
    if (loading || document.hidden || numberOf("offset") < numberOf("total")) {
      return; // new messages arrive with the pages still to load
    }
    loading = true;
    request(sessionUrl("/after?last=" + numberOf("last"))).then(function (body) {
      if (body.count > 0) {
        var empty = document.getElementById("empty");
        if (empty) {
          empty.remove();
        }
        messages.insertAdjacentHTML("beforeend", body.html);
        messages.setAttribute("data-offset", String(numberOf("offset") + body.count));
        messages.setAttribute("data-last", String(body.last));
        say("live", body.count + " new message" + (body.count === 1 ? "" : "s"));
      }
      messages.setAttribute("data-total", String(Math.max(body.total, numberOf("offset"))));
      updateMore();
    }).catch(function (error) {
      say("live", error.message);
    }).then(function () {
      loading = false;
    });
  }

  if (messages && more) {
    more.addEventListener("click", loadMore);
    if ("IntersectionObserver" in window) {
      new IntersectionObserver(function (entries) {
        if (entries.some(function (entry) { return entry.isIntersecting; })) {
          loadMore();
        }
      }, { rootMargin: "600px" }).observe(more);
    }
    window.setInterval(follow, 1500);
  }

  // ---------------------------------------------------------------- keyboard
  function items() {
    if (rows) {
      return Array.prototype.slice.call(rows.querySelectorAll("li.row"));
    }
    if (messages) {
      return Array.prototype.slice.call(messages.querySelectorAll("article.bubble"));
    }
    return [];
  }

  function selectedRow() {
    return document.querySelector(".selected");
  }

  function move(step) {
    var all = items();
    if (!all.length) {
      return;
    }
    var current = all.indexOf(selectedRow());
    var next = current < 0 ? (step > 0 ? 0 : all.length - 1) : Math.min(all.length - 1, Math.max(0, current + step));
    all.forEach(function (item) { item.classList.remove("selected"); });
    all[next].classList.add("selected");
    all[next].scrollIntoView({ block: "nearest" });
  }

  function open() {
    var chosen = selectedRow() || (rows ? rows.querySelector("li.row") : null);
    var link = chosen ? chosen.querySelector("a.open") : null;
    if (link) {
      window.location.assign(link.getAttribute("href"));
    }
  }

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) {
      return;
    }
    var typing = /^(INPUT|SELECT|TEXTAREA)$/.test(event.target.tagName);
    if (typing) {
      if (event.target === box) {
        if (event.key === "ArrowDown") { event.preventDefault(); move(1); }
        if (event.key === "ArrowUp") { event.preventDefault(); move(-1); }
        if (event.key === "Enter") { event.preventDefault(); open(); }
        if (event.key === "Escape") { box.blur(); }
      }
      return;
    }
    if (event.key === "/") {
      event.preventDefault();
      if (box) {
        box.focus();
        box.select();
      } else {
        window.location.assign("/#search");
      }
    } else if (event.key === "j") {
      move(1);
    } else if (event.key === "k") {
      move(-1);
    } else if (event.key === "Enter" && rows) {
      open();
    } else if (event.key === "u" && messages) {
      window.location.assign("/");
    }
  });

  // ---------------------------------------------------------------- writes
  document.addEventListener("click", function (event) {
    var button = event.target.closest ? event.target.closest(".actions button[data-act]") : null;
    if (!button) {
      return;
    }
    var sessionId = button.parentNode.getAttribute("data-session");
    var act = button.getAttribute("data-act");
    var url = "/api/session/" + encodeURIComponent(sessionId) + "/" + act;
    var sent;
    if (act === "rename") {
      var title = window.prompt("New title");
      if (title === null || !title.trim()) {
        return;
      }
      sent = post(url, { title: title });
    } else {
      sent = post(url, { value: button.getAttribute("data-value") === "1" });
    }
    sent.then(function () {
      window.location.reload();
    }).catch(function (error) {
      say(rows ? "status" : "live", error.message);
    });
  });
})();
