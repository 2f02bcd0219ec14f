// The token session: a typed token is checked against the server (GET /stats, which any valid
// token may call) before it is kept, so a wrong one is reported as wrong and never stored; a
// kept token the server stops accepting (401 on a refresh) is dropped with a message. The
// token lives in sessionStorage (api.js). Invariants: while no valid token is kept, nothing of
// a previous session stays on screen; the sign-in form shows only while one is needed.
// No API names the token behind a secret, so "signed in" carries no name or namespace.
import { api, ApiError, storedToken, storeToken } from './api.js';

const $ = (id) => document.getElementById(id);

const ctx = {
  needsToken: true,
  say: () => {},
  showErrors: () => {},
  describe: String,
  onSignedIn: () => {},
  onSignedOut: () => {},
};

/** Whether data calls may be made: the server needs no token, or one is kept. */
export function canCall() {
  return !ctx.needsToken || storedToken() !== '';
}

/** Puts the session state on the page: the header line, the form or the sign-out button. */
export function showSession() {
  const token = storedToken();
  const signedIn = ctx.needsToken && token !== '';
  // Signed in (or no token needed): the header says so and the sign-in section goes away.
  $('session').hidden = !ctx.needsToken || signedIn;
  $('forget-token').hidden = !signedIn;
  $('whoami').textContent = !ctx.needsToken ? 'open server (no token needed)' : signedIn ? 'signed in' : 'not signed in';
  $('session-state').textContent = !ctx.needsToken
    ? 'This server has no token file: every call is allowed without a token.'
    : signedIn ? 'Signed in.' : 'This server needs a token: enter one to see data.';
  // No API names the token behind a secret: say so where the name would be.
  $('whoami').title = signedIn ? 'The server does not tell which token this is, so its name and namespace cannot be shown.' : '';
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
  let stats;
  try {
    stats = await api.checkToken(token);
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
  field.value = '';
  ctx.showErrors('session', []);
  showSession();
  ctx.say('Signed in.');
  ctx.onSignedIn(stats);
}

/** Drops the kept token; `message` (if any) says why in the alert region. */
export function signOut(message = null) {
  storeToken('');
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
