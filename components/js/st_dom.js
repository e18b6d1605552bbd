// @ts-check
// Streamlit's own DOM, for the key scripts: made from components/st_dom.py (its SELECTORS), never edited by hand.
// `python -m components.st_dom` writes it again.
export const nwDom = Object.freeze(Object.assign({
 "APP": "[data-testid=\"stApp\"]",
 "MAIN": "[data-testid=\"stMain\"]",
 "MAIN_BLOCK": ".stMainBlockContainer",
 "SIDEBAR": "[data-testid=\"stSidebar\"]",
 "LAYOUT_WRAPPER": "[data-testid=\"stLayoutWrapper\"]",
 "ELEMENT": ".stElementContainer",
 "SELECTBOX": "[data-testid=\"stSelectbox\"]",
 "SELECT": "[data-testid=\"stSelectbox\"] input[role=\"combobox\"],[data-testid=\"stMultiSelect\"] input[role=\"combobox\"]",
 "SELECT_OPEN": "[data-testid=\"stSelectbox\"] button[aria-haspopup=\"listbox\"]",
 "DATAFRAME": "[data-testid=\"stDataFrame\"]",
 "NAME_FIELD": "[data-testid=\"stSidebar\"] input[aria-label=\"Annotator\"]",
 "NOTE_FIELD": "[data-testid=\"stSidebar\"] input[aria-label=\"Note\"]",
 "HEADER": "[data-testid=\"stHeader\"]",
 "TOOLBAR": "[data-testid=\"stToolbar\"]",
 "SIDEBAR_OPENER": "[data-testid=\"stSidebarCollapsedControl\"]",
 "ELEMENT_TOOLBAR": "[data-testid=\"stElementToolbar\"]",
 "ICON": "[data-testid=\"stIconMaterial\"]",
 "COLUMN": "[data-testid=\"stColumn\"]",
 "SKELETON": "[data-testid=\"stSkeleton\"]",
 "ELEMENT_BY_ID": "[data-testid=\"stElementContainer\"]",
 "MAIN_BLOCK_BY_ID": "[data-testid=\"stMainBlockContainer\"]"
}, {
  KEY_CLASS: "st-key-",
  key: (/** @type {string} */ name) => "." + "st-key-" + name,
  // whether a run of the app is under way or asked for (its elements may still change)
  running: () => {
    const app = document.querySelector("[data-testid=\"stApp\"]");
    const state = app && app.getAttribute("data-test-script-state");
    return state === "running" || state === "rerunRequested";
  },
}));
