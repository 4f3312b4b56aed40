// The console's link to the server: the console session, the admin credential, the namespace,
// REST requests and event streams. Every other file talks to the server through this one.

const SECRET_KEY = 'rtdb-console.secret';

/** An error answered by the server (or the network): `status` is the HTTP status, 0 for none. */
export class ApiError extends Error {
    constructor(status, message) {
        super(message);
        this.status = status;
    }
}

const state = {
    session: null,
    credential: null,
    namespace: 'default',
};
const unauthorizedListeners = new Set();
const namespaceListeners = new Set();

/** Fetches `/.console/api/session`: whether a login is needed and the default namespace. */
export async function loadSession() {
    const response = await fetch('/.console/api/session', { cache: 'no-store' });
    if (!response.ok) {
        throw new ApiError(response.status, `The console session is not available (HTTP ${response.status}).`);
    }
    state.session = await response.json();
    state.namespace = state.session.defaultNamespace || 'default';
    if (!state.session.adminCredentialRequired) {
        state.credential = 'owner';
    } else {
        state.credential = sessionStorage.getItem(SECRET_KEY);
    }
    return state.session;
}

/** The session loaded by `loadSession`. */
export function session() {
    return state.session;
}

/** Whether a credential is at hand (always, on a loopback-only server). */
export function hasCredential() {
    return Boolean(state.credential);
}

/** The credential requests carry (`owner` on a loopback-only server), or null. */
export function credential() {
    return state.credential;
}

/** Keeps `secret` as the credential for this browser tab (sessionStorage). */
export function setCredential(secret) {
    state.credential = secret;
    sessionStorage.setItem(SECRET_KEY, secret);
}

/** Forgets the stored secret; the next request will need a new one. */
export function clearCredential() {
    if (state.session && state.session.adminCredentialRequired) {
        state.credential = null;
        sessionStorage.removeItem(SECRET_KEY);
    }
}

/** Asks the server whether `secret` is an administrator credential; resolves true or false. */
export async function checkCredential(secret) {
    const response = await fetch(`/.console/api/connections?auth=${encodeURIComponent(secret)}`, { cache: 'no-store' });
    if (response.status === 401 || response.status === 403) return false;
    if (!response.ok) throw new ApiError(response.status, await errorMessage(response));
    return true;
}

/** Calls `listener(message)` whenever a request answers 401 (the credential is no longer good). */
export function onUnauthorized(listener) {
    unauthorizedListeners.add(listener);
}

/** The namespace every request names (`?ns=`). */
export function namespace() {
    return state.namespace;
}

/** Switches the namespace and tells the listeners registered with `onNamespaceChange`. */
export function setNamespace(name) {
    const trimmed = name.trim() || (state.session && state.session.defaultNamespace) || 'default';
    if (trimmed === state.namespace) return;
    state.namespace = trimmed;
    for (const listener of namespaceListeners) listener(trimmed);
}

/** Calls `listener(namespace)` when the namespace changes. */
export function onNamespaceChange(listener) {
    namespaceListeners.add(listener);
}

// ---- Paths ----------------------------------------------------------------------------------

/** Path segments of "/a/b" (empty for the root). */
export function segments(path) {
    return String(path).split('/').filter((part) => part.length > 0);
}

/** "/a/b" from any spelling ("a/b/", "//a//b", ""). */
export function normalizePath(path) {
    return '/' + segments(path).join('/');
}

/** The child path of `path` named `key` (which may itself hold slashes). */
export function childPath(path, key) {
    return normalizePath(`${path}/${key}`);
}

/** The parent of `path` (the root's parent is the root). */
export function parentPath(path) {
    const parts = segments(path);
    parts.pop();
    return '/' + parts.join('/');
}

/** The last segment of `path`, or "" for the root. */
export function lastSegment(path) {
    const parts = segments(path);
    return parts.length ? parts[parts.length - 1] : '';
}

/** A REST URL for `path` with the credential, the namespace and `params` (already encoded values). */
export function restUrl(path, params = {}) {
    const encoded = segments(path).map(encodeURIComponent).join('/');
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(params)) {
        if (value !== undefined && value !== null && value !== '') query.set(name, String(value));
    }
    if (state.credential) query.set('auth', state.credential);
    query.set('ns', state.namespace);
    return `/${encoded}.json?${query.toString()}`;
}

/** The text of a value typed by a person: JSON when it parses as JSON, else the text as a string. */
export function parseTyped(text) {
    try {
        return JSON.parse(text);
    } catch {
        return text;
    }
}

/** The text to put in an input for `value`, so that `parseTyped` gives `value` back. */
export function typedText(value) {
    if (typeof value === 'string') {
        try {
            JSON.parse(value);
            return JSON.stringify(value); // "36" or "true" as strings keep their quotes
        } catch {
            return value;
        }
    }
    return JSON.stringify(value);
}

// ---- Requests -------------------------------------------------------------------------------

async function errorMessage(response) {
    const text = await response.text().catch(() => '');
    try {
        const body = JSON.parse(text);
        if (body && typeof body.error === 'string') return body.error;
    } catch {
        // not JSON: use the text itself
    }
    return text.trim() || `HTTP ${response.status}`;
}

function unauthorized(message) {
    clearCredential();
    for (const listener of unauthorizedListeners) listener(message);
}

/**
 * Sends a REST request. `options.params` are extra query parameters, `options.body` a value sent
 * as JSON (or `options.text`, sent as it is); resolves the answer parsed as JSON, or its text when
 * `options.raw`. Rejects with an ApiError carrying the server's message.
 */
export async function request(method, path, options = {}) {
    const init = { method, cache: 'no-store', headers: {} };
    if (options.text !== undefined) {
        init.body = options.text;
    } else if (options.body !== undefined) {
        init.body = JSON.stringify(options.body);
    }
    if (init.body !== undefined) init.headers['Content-Type'] = 'application/json';
    const url = options.url || restUrl(path, options.params);
    let response;
    try {
        response = await fetch(url, init);
    } catch (error) {
        throw new ApiError(0, `The server cannot be reached (${error.message}).`);
    }
    if (!response.ok) {
        const message = await errorMessage(response);
        if (response.status === 401) unauthorized(message);
        throw new ApiError(response.status, message);
    }
    const text = await response.text();
    if (options.raw) return text;
    return text.length ? JSON.parse(text) : null;
}

/** GET `path` as JSON; `params` are extra query parameters. */
export function get(path, params) {
    return request('GET', path, { params });
}

/** PUT `value` at `path`. */
export function set(path, value) {
    return request('PUT', path, { body: value, params: { print: 'silent' } });
}

/** POST `value` under `path`; resolves the new child's key. */
export async function push(path, value) {
    const answer = await request('POST', path, { body: value });
    return answer && answer.name;
}

/** DELETE the value at `path`. */
export function remove(path) {
    return request('DELETE', path, { params: { print: 'silent' } });
}

/** The connections to the server (`namespaceOnly`: only those of the current namespace). */
export async function connections(namespaceOnly) {
    const query = new URLSearchParams({ auth: state.credential || '' });
    if (namespaceOnly) query.set('ns', state.namespace);
    const answer = await request('GET', null, { url: `/.console/api/connections?${query}` });
    return (answer && answer.connections) || [];
}

/** The security rules of the current namespace, as the text the server keeps. */
export function rulesText() {
    return request('GET', '/.settings/rules', { raw: true });
}

/** Installs `text` as the rules of the current namespace; rejects with the compiler's message. */
export function saveRules(text) {
    return request('PUT', '/.settings/rules', { text, raw: true });
}

// ---- Event streams ----------------------------------------------------------------------------

/**
 * Opens an event stream on `path` with query `params`. `handlers.event(kind, path, data)` gets
 * each `put` and `patch`; `handlers.state(name, detail)` gets "open", "reconnecting", "closed"
 * (the server refused or ended it), "cancel" and "unauthorized". Returns `{ close() }`.
 */
export function openStream(path, params, handlers) {
    let source = null;
    let closed = false;
    let retryTimer = null;
    let retryDelay = 1000;

    const connect = () => {
        source = new EventSource(restUrl(path, params));
        source.addEventListener('open', () => {
            retryDelay = 1000;
            handlers.state('open');
        });
        for (const kind of ['put', 'patch']) {
            source.addEventListener(kind, (event) => {
                let message;
                try {
                    message = JSON.parse(event.data);
                } catch {
                    return;
                }
                if (message && typeof message.path === 'string') handlers.event(kind, message.path, message.data);
            });
        }
        source.addEventListener('cancel', (event) => {
            stop();
            handlers.state('cancel', parseEventText(event.data) || 'The server cancelled the stream (permission lost).');
        });
        source.addEventListener('auth_revoked', () => {
            stop();
            unauthorized('The credential was revoked.');
            handlers.state('unauthorized');
        });
        source.addEventListener('error', () => {
            if (closed) return;
            if (source.readyState === EventSource.CONNECTING) {
                handlers.state('reconnecting');
                return;
            }
            // Closed for good by the browser: the server answered with an error status.
            source.close();
            handlers.state('reconnecting');
            diagnose();
        });
    };

    const diagnose = async () => {
        try {
            if (state.credential && !(await checkCredential(state.credential))) {
                unauthorized('The credential is no longer accepted.');
                handlers.state('unauthorized');
                return;
            }
        } catch {
            // the server is away: keep retrying
        }
        if (closed) return;
        retryTimer = setTimeout(() => {
            retryTimer = null;
            if (!closed) connect();
        }, retryDelay);
        retryDelay = Math.min(retryDelay * 2, 15000);
    };

    const stop = () => {
        closed = true;
        if (retryTimer) clearTimeout(retryTimer);
        if (source) source.close();
    };

    connect();
    return { close: stop };
}

function parseEventText(data) {
    try {
        const value = JSON.parse(data);
        return typeof value === 'string' ? value : null;
    } catch {
        return data || null;
    }
}
