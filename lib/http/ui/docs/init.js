// Starts Swagger UI on this server's OpenAPI document. The URL is relative to this page
// (/docs/ -> /openapi.json) so a reverse proxy's path prefix is kept. validatorUrl is off:
// the default would load a badge from validator.swagger.io, and nothing may come from the
// internet. No StandaloneLayout: its top bar lets a user load arbitrary remote documents.
'use strict';
window.addEventListener('DOMContentLoaded', function () {
  window.ui = window.SwaggerUIBundle({
    url: new URL('../openapi.json', window.location.href).href,
    dom_id: '#swagger-ui',
    deepLinking: true,
    validatorUrl: null,
    presets: [window.SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
  });
});
