// StandMeet admin: small improvements over pages that work without it.
"use strict";
(function () {
  // A page that shows a secret once replaces its own history entry with the
  // page it continues to: a reload then visits that page (without the
  // secret) instead of posting the form again.
  var reveal = document.querySelector("[data-replace-url]");
  if (reveal && window.history && history.replaceState) {
    history.replaceState(null, "", reveal.getAttribute("data-replace-url"));
  }

  // Copy buttons copy the value of the field they name.
  document.querySelectorAll("button[data-copy]").forEach(function (btn) {
    btn.hidden = false;
    btn.addEventListener("click", function () {
      var field = document.getElementById(btn.getAttribute("data-copy"));
      if (!field) { return; }
      var text = field.value !== undefined ? field.value : field.textContent;
      var done = function () {
        btn.textContent = "Copied";
        setTimeout(function () { btn.textContent = "Copy"; }, 2000);
      };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(text).then(done, function () { field.select(); });
      } else {
        field.select();
        try { document.execCommand("copy"); done(); } catch (e) { /* the text stays selected */ }
      }
    });
  });

  // The inbound form shows the fields of the chosen kind only.
  var kindInputs = document.querySelectorAll("input[data-kind]");
  if (kindInputs.length) {
    var sync = function () {
      var chosen = document.querySelector("input[data-kind]:checked");
      var kind = chosen ? chosen.value : "";
      var generates = chosen ? chosen.hasAttribute("data-generates") : false;
      document.querySelectorAll("[data-kind-options]").forEach(function (el) {
        el.hidden = el.getAttribute("data-kind-options") !== kind;
      });
      document.querySelectorAll("[data-needs-secret]").forEach(function (el) { el.hidden = generates; });
    };
    kindInputs.forEach(function (i) { i.addEventListener("change", sync); });
    sync();
  }

  // Live logs: a section marked data-refresh is fetched again every two
  // seconds and replaced, while it still says so (something is in flight),
  // for at most two minutes.
  var live = document.querySelector("section[data-refresh][id]");
  if (live && window.fetch && window.DOMParser) {
    var id = live.id, rounds = 0;
    var tick = function () {
      rounds++;
      fetch(location.href, { credentials: "same-origin", headers: { "Accept": "text/html" } })
        .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
        .then(function (html) {
          var doc = new DOMParser().parseFromString(html, "text/html");
          var fresh = doc.getElementById(id);
          var current = document.getElementById(id);
          if (!fresh || !current) { return; }
          current.replaceWith(fresh);
          if (fresh.hasAttribute("data-refresh") && rounds < 60) { setTimeout(tick, 2000); }
        })
        .catch(function () { /* the page still works by reloading */ });
    };
    setTimeout(tick, 2000);
  }
})();
