// Starts Swagger UI on this server's OpenAPI document. The URL is relative to this page
// (/docs/ -> /openapi.json) so a reverse proxy's path prefix is kept. validatorUrl is off:
// the default would load a badge from validator.swagger.io, and nothing may come from the
// internet. No StandaloneLayout: its top bar lets a user load arbitrary remote documents.
'use strict';

// The document lists a HEAD operation beside every GET, because the server answers them. A HEAD
// twin says nothing its GET does not (same parameters, statuses and headers, no body), so the
// reference leaves them out, by the method alone (the page header says HEAD exists).
// taggedOperations is the selector the operation list is drawn from.
function HideHeadOperations() {
  return {
    statePlugins: {
      spec: {
        wrapSelectors: {
          taggedOperations: (original) => (state, ...args) => original(state, ...args)
            .map((tag) => tag.update('operations', (operations) => operations.filter((op) => op.get('method') !== 'head'))),
        },
      },
    },
  };
}

window.addEventListener('DOMContentLoaded', function () {
  window.ui = window.SwaggerUIBundle({
    url: new URL('../openapi.json', window.location.href).href,
    dom_id: '#swagger-ui',
    deepLinking: true,
    validatorUrl: null,
    presets: [window.SwaggerUIBundle.presets.apis],
    plugins: [HideHeadOperations],
    layout: 'BaseLayout',
  });
});
