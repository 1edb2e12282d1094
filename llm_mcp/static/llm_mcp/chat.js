// llm_mcp chat page: send a message and show the reply as it streams (server-sent events over
// a POST), and follow a turn that runs elsewhere (EventSource on the chat's events URL).
// Without this script every form is a plain POST answered by a redirect.
(function () {
  "use strict";
  var box = document.getElementById("llm-mcp-conversation");
  if (!box) { return; }
  var composer = document.getElementById("llm-mcp-composer");

  function state() {
    var el = box.querySelector("[data-state]");
    return el ? { state: el.dataset.state, fingerprint: el.dataset.fingerprint } : {};
  }

  // The HTML comes from this site's own templates (server-rendered and sanitized there).
  function show(data) { if (data && typeof data.html === "string") { box.innerHTML = data.html; } }

  function streamingBubble() {
    var bubble = box.querySelector(".llm-mcp-message.is-streaming");
    if (!bubble) {
      bubble = document.createElement("li");
      bubble.className = "llm-mcp-message role-assistant is-streaming";
      bubble.innerHTML = '<div class="llm-mcp-role">assistant</div><div class="llm-mcp-content"></div>';
      var list = box.querySelector(".llm-mcp-messages");
      (list || box).appendChild(bubble);
    }
    return bubble.querySelector(".llm-mcp-content");
  }

  function flash(text) {
    var p = document.createElement("p");
    p.className = "llm-mcp-notice"; p.setAttribute("role", "alert"); p.textContent = text;
    (document.getElementById("llm-mcp-notices") || box).appendChild(p);
  }

  function handle(event, data) {
    if (event === "token") { streamingBubble().textContent += data; }
    else if (event === "conversation") { var partial = box.querySelector(".is-streaming .llm-mcp-content");
      var kept = partial ? partial.textContent : ""; show(data);
      if (kept && data.state === "running") { streamingBubble().textContent = kept; } }
    else if (event === "failed") { flash("The turn failed: " + data.error); }
    else if (event === "cancelled") { flash("Cancelled."); }
    else if (event === "error") { flash("The page lost track of the turn (" + data.error + "); reload it."); }
  }

  function parse(chunk, feed) {
    var blocks = chunk.split("\n\n");
    var rest = blocks.pop();
    blocks.forEach(function (block) {
      var name = "message", lines = [];
      block.split("\n").forEach(function (line) {
        if (line.indexOf("event:") === 0) { name = line.slice(6).trim(); }
        else if (line.indexOf("data:") === 0) { lines.push(line.slice(5).trim()); }
      });
      if (lines.length) { feed(name, JSON.parse(lines.join("\n"))); }
    });
    return rest;
  }

  function follow() {
    if (!window.EventSource) { return; }
    var url = box.dataset.eventsUrl + "?since=" + encodeURIComponent(state().fingerprint || "");
    var source = new EventSource(url);
    source.addEventListener("conversation", function (e) { show(JSON.parse(e.data)); });
    ["end", "idle", "error"].forEach(function (name) {
      source.addEventListener(name, function () { source.close(); });
    });
  }

  if (composer && window.fetch && window.TextDecoder) {
    composer.addEventListener("submit", function (e) {
      e.preventDefault();
      var text = composer.querySelector("textarea");
      var button = composer.querySelector("button");
      var body = new FormData(composer);
      button.disabled = true;
      var notices = document.getElementById("llm-mcp-notices");
      if (notices) { notices.textContent = ""; }
      composer.setAttribute("data-busy", "1");  // until the turn's events end
      fetch(composer.action, { method: "POST", body: body, credentials: "same-origin",
                               headers: { "Accept": "text/event-stream" } })
        .then(function (response) {
          if (!response.ok) {
            return response.json().then(function (d) { flash(d.error || ("HTTP " + response.status)); });
          }
          text.value = "";
          var reader = response.body.getReader(), decoder = new TextDecoder(), buffer = "";
          function pump() {
            return reader.read().then(function (step) {
              if (step.done) { return; }
              buffer = parse(buffer + decoder.decode(step.value, { stream: true }), handle);
              return pump();
            });
          }
          return pump();
        })
        .catch(function (err) { flash("The message could not be sent: " + err); })
        .then(function () { button.disabled = false; composer.removeAttribute("data-busy"); if (["running", "unfinished", "tasks"].indexOf(state().state) >= 0) { follow(); } });
    });
  }

  if (["running", "unfinished", "tasks"].indexOf(state().state) >= 0) { follow(); }
})();
