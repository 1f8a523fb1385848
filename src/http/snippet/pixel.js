/*! Trackway browser snippet: first-party collection for server-side tracking. Apache-2.0. */
// Embedded in shops' pages, checkout included: no dependency, no global but `trackway`, and
// nothing it does may throw into the page (every entry point is wrapped). Sends to the
// `collect` route next to wherever this file was loaded from (tracking domain or path proxy).
((w, d) => {
  const script = d.currentScript;
  if (!script || w.trackway?.loaded) return;
  const CLICK_IDS = 'fbclid gclid gbraid wbraid ttclid msclkid ScCid epik rdt_cid li_fat_id'.split(
    ' ',
  );
  const COOKIES =
    /^(_fbp|_fbc|_ttp|_ga|_ga_[A-Za-z0-9]+|_gcl_aw|_scid|_epik|_rdt_uuid|_uetvid|_uetmsclkid|li_fat_id)$/;
  const key = script.getAttribute('data-key');
  const endpoint = new URL('collect', script.src).href;
  const requireConsent = script.getAttribute('data-require-consent') === 'true';
  const consent = {};
  const waiting = [];
  let pageId = '';
  let lastUrl = '';

  const random = () => {
    const bytes = crypto.getRandomValues(new Uint8Array(12));
    let out = '';
    for (const byte of bytes) out += (byte % 36).toString(36);
    return out;
  };
  // randomUUID exists only on https pages: the same v4 shape from getRandomValues elsewhere.
  const uuid = () =>
    crypto.randomUUID?.() ??
    '10000000-1000-4000-8000-100000000000'.replace(/[018]/g, (c) =>
      (c ^ (crypto.getRandomValues(new Uint8Array(1))[0] & (15 >> (c / 4)))).toString(16),
    );
  const cookies = () => {
    const jar = {};
    for (const part of d.cookie ? d.cookie.split('; ') : []) {
      const eq = part.indexOf('=');
      const name = part.slice(0, eq);
      if (eq > 0 && !(name in jar)) jar[name] = part.slice(eq + 1);
    }
    return jar;
  };
  // On the widest domain the browser accepts (the site's registrable domain), so every
  // subdomain of the shop shares the visitor: each wider candidate is tried until one sticks.
  const setCookie = (name, value, days) => {
    const labels = location.hostname.split('.');
    const secure = location.protocol === 'https:' ? ';secure' : '';
    const tail = `;path=/;max-age=${days * 86400};samesite=lax${secure}`;
    for (let i = labels.length - 2; i >= 0; i--) {
      d.cookie = `${name}=${value}${tail};domain=${labels.slice(i).join('.')}`;
      if (cookies()[name] === value) return;
    }
    d.cookie = name + '=' + value + tail;
  };
  const allowed = () =>
    requireConsent ? consent.ad_user_data === 'granted' : consent.ad_user_data !== 'denied';
  // The visitor's identifiers, read (and written where missing) at send time, so nothing is
  // stored in the browser before consent allows it.
  const identity = () => {
    const jar = cookies();
    const params = new URLSearchParams(location.search);
    const ids = {};
    const found = {};
    let id = jar._tw_id;
    if (!id) {
      id = `tw.${Date.now()}.${random()}`;
      setCookie('_tw_id', id, 400);
    }
    for (const name of CLICK_IDS) {
      let value = params.get(name);
      if (value) setCookie(`_tw_${name}`, encodeURIComponent(value), 90);
      else if (jar[`_tw_${name}`]) value = decodeURIComponent(jar[`_tw_${name}`]);
      if (value) ids[name] = value.slice(0, 512);
    }
    if (!jar._fbp) {
      jar._fbp = `fb.1.${Date.now()}.${Math.floor(1e9 + Math.random() * 9e9)}`;
      setCookie('_fbp', jar._fbp, 90);
    }
    // A new click replaces an older _fbc, as Meta's own pixel does.
    if (ids.fbclid && jar._fbc?.split('.').slice(3).join('.') !== ids.fbclid) {
      jar._fbc = `fb.1.${Date.now()}.${ids.fbclid}`;
      setCookie('_fbc', jar._fbc, 90);
    }
    for (const name in jar)
      if (COOKIES.test(name) && jar[name]) found[name] = jar[name].slice(0, 512);
    return { anonymous_id: id, ids, cookies: found };
  };
  const post = (body) => {
    const text = JSON.stringify(body);
    const beacon = () => {
      try {
        navigator.sendBeacon?.(endpoint, new Blob([text], { type: 'text/plain' }));
      } catch {}
    };
    try {
      // text/plain keeps it a "simple" request: no preflight. A 429 or 4xx is dropped quietly.
      fetch(endpoint, {
        method: 'POST',
        body: text,
        keepalive: text.length < 6e4,
        credentials: 'include',
        headers: { 'Content-Type': 'text/plain' },
      }).catch(beacon);
    } catch {
      beacon();
    }
  };
  const send = (body) => {
    if (consent.ad_user_data) body.consent = consent;
    if (allowed()) Object.assign(body, identity());
    else {
      // Consent denied: an id for this page only, nothing written, no identifier sent.
      pageId ||= `tw.0.${random()}`;
      body.anonymous_id = pageId;
    }
    post(body);
  };
  const track = (name, props = {}) => {
    const id = String(props.event_id || uuid());
    const body = { key, event_name: String(name).slice(0, 100), event_id: id };
    body.url = location.href.slice(0, 2048);
    if (/^https?:/.test(d.referrer)) body.referrer = d.referrer.slice(0, 2048);
    if (d.title) body.title = d.title.slice(0, 2048);
    if (Number.isFinite(props.value)) body.value = props.value;
    if (props.currency) body.currency = String(props.currency);
    if (props.custom_data && typeof props.custom_data === 'object') {
      body.custom_data = props.custom_data;
    }
    // With data-require-consent, events wait in memory until ad_user_data is granted.
    if (requireConsent && !allowed()) waiting.push(body);
    else send(body);
    return id;
  };
  const setConsent = (value) => {
    for (const k of ['ad_user_data', 'ad_personalization', 'limited_data_use']) {
      if (k in value) consent[k] = value[k];
    }
    if (allowed()) while (waiting.length) send(waiting.shift());
  };
  const pageView = () => {
    if (location.href === lastUrl) return;
    lastUrl = location.href;
    track('PageView');
  };
  const trackway = (command, a, b) => {
    try {
      if (command === 'track') return track(a, b);
      if (command === 'consent') return setConsent(a || {});
      if (command === 'page') return pageView();
    } catch {}
  };
  try {
    const queue = w.trackway?.q || [];
    const run = (call) => trackway(...call);
    trackway.loaded = true;
    w.trackway = trackway;
    // Consent queued before the script arrived applies before anything is sent.
    queue.filter((call) => call[0] === 'consent').forEach(run);
    if (script.getAttribute('data-auto-pageview') !== 'false') {
      // Single-page apps: a pushState navigation is a page view, as is going back.
      const push = history.pushState;
      history.pushState = function (...args) {
        const result = push.apply(this, args);
        trackway('page');
        return result;
      };
      w.addEventListener('popstate', () => trackway('page'));
      trackway('page');
    }
    queue.filter((call) => call[0] !== 'consent').forEach(run);
  } catch {}
})(window, document);
