// Remember the annotator's name in this browser (local mode): a reload, a new tab or a
// deep link opened from Home gets it back instead of a read-only page. `data.name` is
// the name the server has for this session (our own field, shown only as a value).
const KEY = "nw-annotator";
export default function (component) {
  const {data, setStateValue} = component;
  const name = (data && data.name) || "";
  let stored = null;
  try { stored = localStorage.getItem(KEY); } catch (e) { return; }
  const page = window.__nwName || (window.__nwName = {asked: false, shown: false});
  if (name) {
    page.shown = true;  // the session has a name: remember it
    if (stored !== name) { try { localStorage.setItem(KEY, name); } catch (e) { /* full */ } }
  } else if (!page.asked && !page.shown && stored) {
    page.asked = true;  // once per page: hand the remembered name to this session
    setStateValue("name", stored);
  } else if (page.shown && stored) {
    try { localStorage.removeItem(KEY); } catch (e) { /* ignore */ }  // cleared on purpose
  }
}
