// The judge page's keys press its buttons: 1 or Left: left; 2 or Right: right; 0: tie;
// s: type a skip reason (Enter skips); u: undo. Keys typed into a field are left alone.
document.addEventListener("keydown", function (event) {
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  var target = event.target;
  if (target && (target.tagName === "INPUT" || target.tagName === "SELECT" || target.tagName === "TEXTAREA")) {
    if (event.key === "Escape") target.blur();
    return;
  }
  var buttons = {"1": "choose-left", "ArrowLeft": "choose-left", "2": "choose-right",
                 "ArrowRight": "choose-right", "0": "choose-tie", "u": "undo"};
  if (event.key === "s") {
    var reason = document.getElementById("skip-reason");
    if (reason) { event.preventDefault(); reason.focus(); }
    return;
  }
  var id = buttons[event.key];
  var button = id && document.getElementById(id);
  if (button && !document.querySelector(".htmx-request")) {
    event.preventDefault();
    button.click();
  }
});
