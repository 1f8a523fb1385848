// Draws the API reference with Redoc, in Trackway's colours (the dashboard's), from the
// document this server serves. No inline script: the page's CSP allows its own files only.
document.addEventListener('DOMContentLoaded', () => {
  const element = document.getElementById('redoc');
  if (!element || typeof Redoc === 'undefined') return;
  Redoc.init(
    element.dataset.spec,
    {
      hideDownloadButton: false,
      expandResponses: '200,201,202',
      jsonSampleExpandLevel: 3,
      pathInMiddlePanel: true,
      sortPropsAlphabetically: false,
      // Colours chosen for contrast (axe: 4.5:1 for text), Redoc's defaults fall short.
      theme: {
        colors: {
          primary: { main: '#0b5cad' },
          text: { primary: '#1f2937', secondary: '#4b5563' },
          http: { get: '#1b6e20', post: '#0b5cad', patch: '#8a4b00', delete: '#b3261e' },
          // The response tabs sit on the dark right panel: light tints read there.
          responses: {
            success: { tabTextColor: '#7ee2a8' },
            error: { tabTextColor: '#ff9b94' },
            redirect: { tabTextColor: '#ffd479' },
            info: { tabTextColor: '#9ec5ff' },
          },
        },
        typography: {
          fontFamily: 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif',
          headings: { fontFamily: 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif' },
          code: {
            fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace',
            color: '#a3261d',
          },
        },
        sidebar: { backgroundColor: '#f4f6f9' },
        rightPanel: { backgroundColor: '#1f2937' },
      },
    },
    element,
    () => {
      // Redoc's content-type and example pickers have no label: name them for screen readers.
      for (const select of element.querySelectorAll('select:not([aria-label])')) {
        select.setAttribute('aria-label', 'Choose the example shown');
      }
      // Redoc's half-transparent labels (2.9:1 on white) have no theme key: made opaque here.
      for (const node of element.querySelectorAll('h5, caption, div, span, td')) {
        if (/^rgba\(\d+, \d+, \d+, 0\.[0-6]\d*\)$/.test(getComputedStyle(node).color)) {
          node.style.color = '#4b5563';
        }
      }
    },
  );
});
