// Starts the console: the session and the admin login, the tabs, the namespace field, the Data
// tab's toolbar (path, breadcrumb, live state) and the notices shown at the bottom of the page.

import * as api from './api.js';
import { TreeView } from './tree.js';
import { setUpTransfer } from './transfer.js';
import { QueryRunner } from './query.js';
import { ConnectionsView } from './connections.js';
import { RulesEditor } from './rules.js';

const $ = (id) => document.getElementById(id);

let toastTimer = null;

/** Shows `message` at the bottom of the page; `kind` is "info" or "error". */
export function notify(message, kind = 'info') {
    const toast = $('toast');
    toast.textContent = message;
    toast.dataset.kind = kind;
    toast.hidden = false;
    clearTimeout(toastTimer);
    toastTimer = setTimeout(() => {
        toast.hidden = true;
    }, kind === 'error' ? 8000 : 3000);
}

const LIVE_TEXT = {
    connecting: 'connecting',
    live: 'live',
    reconnecting: 'reconnecting',
    stopped: 'stopped',
    closed: 'closed',
};

function renderBreadcrumb(path, tree) {
    const crumb = $('breadcrumb');
    crumb.replaceChildren();
    const parts = api.segments(path);
    const link = (label, target, current) => {
        const item = document.createElement(current ? 'span' : 'a');
        item.className = current ? 'crumb current' : 'crumb';
        item.textContent = label;
        if (!current) {
            item.href = '#';
            item.addEventListener('click', (event) => {
                event.preventDefault();
                tree.show(target);
            });
        }
        return item;
    };
    crumb.append(link('root', '/', parts.length === 0));
    parts.forEach((part, index) => {
        const separator = document.createElement('span');
        separator.className = 'crumb-separator';
        separator.textContent = '/';
        crumb.append(separator, link(part, '/' + parts.slice(0, index + 1).join('/'), index === parts.length - 1));
    });
}

const views = {};
let currentTab = 'data';

function selectTab(name) {
    currentTab = name;
    for (const tab of document.querySelectorAll('.tab')) {
        const selected = tab.dataset.tab === name;
        tab.setAttribute('aria-selected', String(selected));
        tab.classList.toggle('active', selected);
        $(`view-${tab.dataset.tab}`).hidden = !selected;
    }
    views.connections.setActive(name === 'connections');
    if (name === 'rules') views.rules.load(false);
}

function startApp() {
    $('startup').hidden = true;
    $('login').hidden = true;
    $('app').hidden = false;
    $('namespace').value = api.namespace();
    views.tree.show(views.tree.rootPath || '/');
    selectTab(currentTab);
}

function stopApp() {
    views.tree.close();
    views.connections.setActive(false);
}

async function askForSecret(message) {
    stopApp();
    $('app').hidden = true;
    $('startup').hidden = true;
    $('login').hidden = false;
    const error = $('login-error');
    error.hidden = !message;
    error.textContent = message || '';
    $('secret').value = '';
    $('secret').focus();
}

async function onLogin(event) {
    event.preventDefault();
    const secret = $('secret').value;
    const error = $('login-error');
    if (!secret) {
        error.textContent = 'Enter the admin secret.';
        error.hidden = false;
        return;
    }
    $('login-submit').disabled = true;
    try {
        if (await api.checkCredential(secret)) {
            api.setCredential(secret);
            startApp();
        } else {
            error.textContent = 'That secret is not accepted by this server.';
            error.hidden = false;
            $('secret').select();
        }
    } catch (failure) {
        error.textContent = failure.message;
        error.hidden = false;
    } finally {
        $('login-submit').disabled = false;
    }
}

function setUpDataToolbar(tree) {
    $('path-form').addEventListener('submit', (event) => {
        event.preventDefault();
        tree.show($('path-input').value);
    });
    setUpTransfer({ tree, notify });
}

async function boot() {
    const tree = new TreeView($('tree'), {
        notify,
        onStreamState: (state) => {
            const live = $('live-state');
            live.dataset.state = state;
            live.textContent = LIVE_TEXT[state] || state;
        },
        onNavigate: (path) => {
            $('path-input').value = path;
            $('import-target').textContent = path;
            renderBreadcrumb(path, tree);
        },
    });
    views.tree = tree;
    views.query = new QueryRunner({ notify });
    views.connections = new ConnectionsView({ notify });
    views.rules = new RulesEditor({ notify });
    setUpDataToolbar(tree);

    for (const tab of document.querySelectorAll('.tab')) {
        tab.addEventListener('click', () => selectTab(tab.dataset.tab));
    }
    $('namespace-form').addEventListener('submit', (event) => {
        event.preventDefault();
        api.setNamespace($('namespace').value);
        $('namespace').value = api.namespace();
    });
    $('namespace').addEventListener('change', () => {
        if ($('namespace').value.trim()) api.setNamespace($('namespace').value);
    });
    $('namespace').addEventListener('blur', () => {
        $('namespace').value = api.namespace();
    });
    api.onNamespaceChange(() => {
        tree.show('/');
        views.rules.load(true);
        views.connections.refresh();
    });
    api.onUnauthorized((message) => {
        if (api.session() && api.session().adminCredentialRequired) {
            askForSecret(`Please sign in again: ${message}`);
        } else {
            notify(message, 'error');
        }
    });
    $('login-form').addEventListener('submit', onLogin);

    let session;
    try {
        session = await api.loadSession();
    } catch (error) {
        $('startup').textContent = error.message;
        $('startup').classList.add('error-text');
        return;
    }
    if (!session.adminCredentialRequired) {
        startApp();
    } else if (!api.hasCredential()) {
        askForSecret(null);
    } else {
        // A secret kept from earlier in this tab: make sure it still works.
        let good = false;
        try {
            good = await api.checkCredential(api.credential());
        } catch {
            good = false;
        }
        if (good) startApp();
        else {
            api.clearCredential();
            askForSecret(null);
        }
    }
}

boot();
