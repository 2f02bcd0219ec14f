// The token session: a typed token is checked against the server (GET /whoami, which any valid
// token may call) before it is kept, so a wrong one is reported as wrong and never stored; a
// kept token the server stops accepting (401 on a refresh) is dropped with a message. The
// token lives in sessionStorage (api.js); the header says which token it is ("signed in as
// admin (namespace *)") from GET /whoami: the check's answer, or for a token kept from
// before a reload, the next refresh's (app.js asks while needsPrincipal()). Invariants: while
// no valid token is kept, nothing of a previous session stays on screen, its name included;
// the sign-in form shows only while one is needed.
import { api, ApiError, storedToken, storeToken } from './api.js';
import { principalLabel } from './format.js';

const $ = (id) => document.getElementById(id);

const ctx = {
  needsToken: true,
  say: () => {},
  showErrors: () => {},
  describe: String,
  onSignedIn: () => {},
  onSignedOut: () => {},
  /** The GET /whoami answer for the kept token; null while not known. */
  principal: null,
};

/** Whether data calls may be made: the server needs no token, or one is kept. */
export function canCall() {
  return !ctx.needsToken || storedToken() !== '';
}

/** Whether the header still lacks the name of a kept token (a refresh then asks GET /whoami). */
export function needsPrincipal() {
  return ctx.needsToken && storedToken() !== '' && ctx.principal === null;
}

/** Records the GET /whoami answer for the kept token and shows it. */
export function setPrincipal(whoami) {
  ctx.principal = whoami;
  showSession();
}

function scopeHint(principal) {
  const namespace = principal?.namespace;
  if (typeof namespace !== 'string') return '';
  return namespace === '*' ? 'This token may see and change every job and rule.'
    : `This token may see and change only identifiers starting with "${namespace}".`;
}

/** Puts the session state on the page: the header line, the form or the sign-out button. */
export function showSession() {
  const token = storedToken();
  const signedIn = ctx.needsToken && token !== '';
  // Signed in (or no token needed): the header says so and the sign-in section goes away.
  $('session').hidden = !ctx.needsToken || signedIn;
  $('forget-token').hidden = !signedIn;
  $('whoami').textContent = !ctx.needsToken ? 'open server (no token needed)' : signedIn ? principalLabel(ctx.principal) : 'not signed in';
  $('session-state').textContent = !ctx.needsToken
    ? 'This server has no token file: every call is allowed without a token.'
    : signedIn ? 'Signed in.' : 'This server needs a token: enter one to see data.';
  $('whoami').title = signedIn ? scopeHint(ctx.principal) : '';
}

async function onTokenSubmit(event) {
  event.preventDefault();
  const field = $('token');
  const token = field.value.trim();
  if (token === '') {
    ctx.showErrors('session', ['Enter a token first.']);
    field.focus();
    return;
  }
  const submit = $('token-submit');
  submit.disabled = true;
  ctx.say('Checking the token…');
  let whoami;
  try {
    whoami = await api.checkToken(token);
  } catch (err) {
    ctx.say('');
    ctx.showErrors('session', [err instanceof ApiError && err.status === 401
      ? 'Wrong token: the server refused it (HTTP 401 unauthorized). It was not kept.'
      : `The token could not be checked, so it was not kept. ${ctx.describe(err)}`]);
    field.focus();
    field.select();
    return;
  } finally {
    submit.disabled = false;
  }
  storeToken(token);
  ctx.principal = whoami;
  field.value = '';
  ctx.showErrors('session', []);
  showSession();
  ctx.say('Signed in.');
  ctx.onSignedIn(whoami);
}

/** Drops the kept token; `message` (if any) says why in the alert region. */
export function signOut(message = null) {
  storeToken('');
  ctx.principal = null;
  showSession();
  if (message !== null) ctx.showErrors('session', [message]);
  // Nothing may stay on screen that the next user of this tab is not allowed to see.
  if (ctx.needsToken) ctx.onSignedOut();
  $('token').focus();
}

/** The server refused the kept token on a refresh (it was removed or the token file changed). */
export function tokenRefused() {
  if (!ctx.needsToken || storedToken() === '') return;
  signOut('The server no longer accepts the token of this tab (HTTP 401 unauthorized): sign in again.');
}

/** Wires the session form; `options` gives the callbacks and whether the server needs a token. */
export function setupSession(options) {
  Object.assign(ctx, options);
  $('token-form').addEventListener('submit', (event) => void onTokenSubmit(event));
  $('forget-token').addEventListener('click', () => {
    signOut();
    ctx.say('Signed out: the token is forgotten.');
  });
}

/** Learned from /openapi.json after start. */
export function setNeedsToken(needsToken) {
  ctx.needsToken = needsToken;
  showSession();
}
