(function () {
  var body = document.body;
  var box = document.getElementById('attention-only');
  if (box) {
    box.addEventListener('change', function () {
      body.classList.toggle('attention-only', box.checked);
    });
  }
  function select() {
    var old = document.querySelectorAll('td.cell.selected');
    for (var i = 0; i < old.length; i++) { old[i].classList.remove('selected'); }
    var id = location.hash.slice(1);
    if (!id) { return; }
    var cell = document.querySelector('td.cell[data-detail="' + id + '"]');
    if (cell) { cell.classList.add('selected'); }
  }
  window.addEventListener('hashchange', select);
  document.addEventListener('keydown', function (e) {
    if (e.key === 'Escape' && location.hash) { location.hash = ''; }
  });
  select();
})();
