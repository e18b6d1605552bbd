// Remember the annotator's name in this browser (local mode): a reload, a new tab or a
// deep link opened from Home gets it back instead of a read-only page. `data.name` is
// the name the server has for this session (our own field, shown only as a value).
const KEY = "nw-annotator";
export default function (component) {
  const {data, setStateValue} = component;
  const name = (data && data.name) || "";
  let stored = null;
  try { stored = localStorage.getItem(KEY); } catch (e) { return; }
  const page = window.__nwName || (window.__nwName = {asked: false});
  if (name) {  // the session has a name: remember it
    if (stored !== name) { try { localStorage.setItem(KEY, name); } catch (e) { /* full */ } }
  } else if (data && data.cleared) {  // the annotator emptied the field: forget it
    if (stored) { try { localStorage.removeItem(KEY); } catch (e) { /* ignore */ } }
  } else if (stored && !page.asked) {
    // hand the remembered name to this session (once per page: the value stays in this
    // component's state, which the browser sends again to a new session after a restart)
    page.asked = true;
    setStateValue("name", stored);
  }
}
