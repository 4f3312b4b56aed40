// The Connections tab: every WebSocket and event stream open on the server, refreshed every two
// seconds while the tab is shown, and who is signed in (presence) from the connections' uids.

import * as api from './api.js';

const $ = (id) => document.getElementById(id);
const POLL_MS = 2000;

function cell(text, className) {
    const td = document.createElement('td');
    td.textContent = text;
    if (className) td.className = className;
    return td;
}

/** "12 s ago", "3 min ago", "2 h ago" for a time in milliseconds since 1970. */
function ago(milliseconds) {
    const seconds = Math.max(0, Math.round((Date.now() - milliseconds) / 1000));
    if (seconds < 60) return `${seconds} s ago`;
    if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
    if (seconds < 86400) return `${Math.floor(seconds / 3600)} h ago`;
    return `${Math.floor(seconds / 86400)} d ago`;
}

/** The Connections tab; polls only while `setActive(true)`. */
export class ConnectionsView {
    constructor({ notify }) {
        this.notify = notify;
        this.timer = null;
        this.active = false;
        this.inFlight = false;
        $('connections-ns-only').addEventListener('change', () => this.refresh());
    }

    /** Starts (true) or stops (false) polling. */
    setActive(active) {
        if (active === this.active) return;
        this.active = active;
        clearInterval(this.timer);
        this.timer = null;
        if (active) {
            this.refresh();
            this.timer = setInterval(() => this.refresh(), POLL_MS);
        }
    }

    /** Fetches the connections now (when the tab is shown). */
    async refresh() {
        if (!this.active || this.inFlight) return;
        this.inFlight = true;
        try {
            const connections = await api.connections($('connections-ns-only').checked);
            if (this.active) this.render(connections);
        } catch (error) {
            $('connections-summary').textContent = `Connections are not available: ${error.message}`;
        } finally {
            this.inFlight = false;
        }
    }

    render(connections) {
        const sorted = connections.slice().sort((a, b) => a.id - b.id);
        const body = $('connections-table').querySelector('tbody');
        body.replaceChildren(...sorted.map((connection) => {
            const row = document.createElement('tr');
            row.className = 'connection-row';
            row.dataset.id = String(connection.id);
            row.dataset.transport = connection.transport;
            const opened = cell(ago(connection.openedAt));
            opened.title = new Date(connection.openedAt).toLocaleString();
            row.append(
                cell(String(connection.id), 'mono'),
                cell(connection.transport === 'eventStream' ? 'event stream' : connection.transport,
                    `transport transport-${connection.transport}`),
                cell(connection.namespace, 'mono'),
                cell(connection.remoteAddress || '', 'mono'),
                opened,
                cell(connection.uid === null || connection.uid === undefined ? 'anonymous' : connection.uid,
                    connection.uid ? 'mono' : 'muted'),
                cell(String(connection.listens ?? 0), 'number'),
                cell(String(connection.onDisconnectWrites ?? 0), 'number'),
                cell(connection.path || '', 'mono'),
            );
            return row;
        }));
        $('connections-empty').hidden = sorted.length !== 0;

        const sockets = sorted.filter((c) => c.transport === 'websocket').length;
        const streams = sorted.length - sockets;
        const users = new Map();
        for (const connection of sorted) {
            if (!connection.uid) continue;
            users.set(connection.uid, (users.get(connection.uid) || 0) + 1);
        }
        $('connections-summary').textContent =
            `${sorted.length} ${sorted.length === 1 ? 'connection' : 'connections'} · ` +
            `${sockets} WebSocket · ${streams} event ${streams === 1 ? 'stream' : 'streams'} · ` +
            `${users.size} signed-in ${users.size === 1 ? 'user' : 'users'}`;

        const list = $('presence-list');
        if (users.size === 0) {
            const none = document.createElement('li');
            none.className = 'muted';
            none.textContent = 'Nobody is signed in; anonymous and admin connections are listed above.';
            list.replaceChildren(none);
        } else {
            list.replaceChildren(...[...users.entries()].sort().map(([uid, count]) => {
                const item = document.createElement('li');
                item.className = 'presence-user';
                item.dataset.uid = uid;
                const dot = document.createElement('span');
                dot.className = 'online-dot';
                const name = document.createElement('span');
                name.className = 'mono';
                name.textContent = uid;
                const detail = document.createElement('span');
                detail.className = 'muted';
                detail.textContent = `${count} ${count === 1 ? 'connection' : 'connections'}`;
                item.append(dot, name, detail);
                return item;
            }));
        }
    }
}
