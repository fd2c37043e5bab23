// gofault dashboard: trial filters, live updates (server-sent events) and
// the replay button. No dependencies; pages work without it.
(function () {
  var table = document.getElementById('trials');
  if (table) {
    var sel = document.querySelectorAll('.filters select');
    var apply = function () {
      var want = {};
      sel.forEach(function (s) { if (s.value) want[s.name] = s.value; });
      var shown = 0;
      table.querySelectorAll('tbody tr').forEach(function (tr) {
        var ok = true;
        for (var k in want) {
          var v = ' ' + (tr.dataset[k] || '') + ' ';
          if (v.indexOf(' ' + want[k] + ' ') < 0) ok = false;
        }
        tr.hidden = !ok;
        if (ok) shown++;
      });
      var c = document.getElementById('shown');
      if (c) c.textContent = shown;
    };
    sel.forEach(function (s) { s.addEventListener('change', apply); });
    apply();
  }
  var live = document.body.dataset.live;
  if (live && window.EventSource) {
    var es = new EventSource(live);
    es.addEventListener('update', function (e) {
      if (e.data !== document.body.dataset.version) location.reload();
    });
  }
  var btn = document.getElementById('replay');
  if (btn) {
    btn.addEventListener('click', function () {
      var out = document.getElementById('replay-result');
      btn.disabled = true;
      out.textContent = 'replaying ' + btn.dataset.trial + ' …';
      fetch(btn.dataset.url, { method: 'POST' }).then(function (r) { return r.json(); }).then(function (j) {
        out.textContent = j.summary + '\n\n' + j.output;
        out.className = j.reproduced ? 'status-failed' : '';
        btn.disabled = false;
      }).catch(function (e) { out.textContent = 'replay failed: ' + e; btn.disabled = false; });
    });
  }
})();
