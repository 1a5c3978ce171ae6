// Progressive enhancement of the pages: every page works without JavaScript; these modules add
// conveniences (copy buttons, confirmation prompts, live countdowns, the call page's player). Loaded as an ES module from this origin
// (the Content-Security-Policy allows no inline script).
import './copy.js';
import './confirm.js';
import './countdown.js';
import './player.js';
import './inbox.js';
import './board.js';
