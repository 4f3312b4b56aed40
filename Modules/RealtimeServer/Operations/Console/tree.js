// The live tree on the Data tab. One event stream watches the path the view is opened on; its
// first level is fetched a page at a time (ordered by key, limited), deeper levels are shown from
// the same stream's data and paged in the page. Rows are reconciled in place on every change, and
// changed values are briefly highlighted.

import * as api from './api.js';
import { sortedKeys } from './ordering.js';

/** Children shown per page, at every level. */
export const PAGE_SIZE = 50;

const MAX_TEXT = 240;
const INVALID_KEY = /[.#$[\]\x00-\x1f\x7f]/;

function element(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
}

function button(className, text, title) {
    const node = element('button', className, text);
    node.type = 'button';
    if (title) {
        node.title = title;
        node.setAttribute('aria-label', title);
    }
    return node;
}

function isObject(value) {
    return value !== null && typeof value === 'object';
}

function typeOf(value) {
    if (value === null || value === undefined) return 'null';
    if (isObject(value)) return 'object';
    return typeof value; // string, number, boolean
}

/** The text a leaf is shown with: strings quoted as JSON, long ones cut. */
function leafText(value) {
    const text = typeof value === 'string' ? JSON.stringify(value) : String(value);
    return text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}…` : text;
}

function plural(count, one, many) {
    return `${count} ${count === 1 ? one : many}`;
}

/** Writes `value` at `parts` inside `node`, dropping emptied objects; returns the new node. */
function setAt(node, parts, value) {
    if (parts.length === 0) {
        if (value === undefined || (isObject(value) && Object.keys(value).length === 0)) return null;
        return value;
    }
    const object = isObject(node) ? node : {};
    const [head, ...rest] = parts;
    const child = setAt(head in object ? object[head] : null, rest, value);
    if (child === null) {
        delete object[head];
    } else {
        object[head] = child;
    }
    return Object.keys(object).length ? object : null;
}

/** The live tree: `show(path)` opens it on a path; `close()` ends its stream. */
export class TreeView {
    /**
     * `container` receives the tree. `hooks.notify(message, kind)` reports results and errors,
     * `hooks.onStreamState(name)` the stream's state, `hooks.onNavigate(path)` a change of path.
     */
    constructor(container, hooks) {
        this.container = container;
        this.hooks = hooks;
        this.rootPath = '/';
        this.data = undefined;
        this.mode = 'query';
        this.limit = PAGE_SIZE;
        this.stream = null;
        this.generation = 0;
        this.expanded = new Set();
        this.shown = new Map();
        this.changes = [];
        this.renderScheduled = false;
        this.rootNode = null;
        container.addEventListener('click', (event) => this.onClick(event));
        container.addEventListener('keydown', (event) => this.onKeyDown(event));
        container.addEventListener('submit', (event) => this.onSubmit(event));
    }

    /** Opens the view on `path` (the root when omitted), with its first level shown. */
    show(path = '/') {
        const target = api.normalizePath(path);
        if (target !== this.rootPath) {
            this.expanded.clear();
            this.shown.clear();
        }
        this.rootPath = target;
        this.data = undefined;
        this.mode = 'query';
        this.limit = PAGE_SIZE;
        this.container.replaceChildren(element('p', 'placeholder', 'Loading…'));
        this.rootNode = null;
        this.openStream();
        this.hooks.onNavigate(target);
    }

    /** Re-opens the stream on the same path (after a login or a change of namespace). */
    reload() {
        this.show(this.rootPath);
    }

    /** Ends the stream. */
    close() {
        this.generation += 1;
        if (this.stream) this.stream.close();
        this.stream = null;
        this.hooks.onStreamState('closed');
    }

    /** The value the view currently holds for `path`, or undefined when it is not loaded. */
    valueAt(path) {
        let current = this.data;
        const base = api.segments(this.rootPath);
        const parts = api.segments(path);
        if (parts.length < base.length || base.some((part, index) => parts[index] !== part)) return undefined;
        for (const part of parts.slice(base.length)) {
            if (!isObject(current) || !(part in current)) return null;
            current = current[part];
        }
        return current;
    }

    // ---- The stream -------------------------------------------------------------------------

    openStream() {
        if (this.stream) this.stream.close();
        const generation = ++this.generation;
        const params = this.mode === 'query'
            ? { orderBy: JSON.stringify('$key'), limitToFirst: this.limit + 1 }
            : {};
        this.quietNextPut = true;
        this.hooks.onStreamState('connecting');
        this.stream = api.openStream(this.rootPath, params, {
            event: (kind, path, data) => {
                if (generation === this.generation) this.apply(kind, path, data);
            },
            state: (name, detail) => {
                if (generation !== this.generation) return;
                if (name === 'open') this.hooks.onStreamState('live');
                else if (name === 'reconnecting') this.hooks.onStreamState('reconnecting');
                else if (name === 'cancel') {
                    this.hooks.onStreamState('stopped');
                    this.hooks.notify(detail, 'error');
                } else if (name === 'unauthorized') {
                    this.hooks.onStreamState('stopped');
                }
            },
        });
    }

    apply(kind, path, data) {
        const parts = api.segments(path);
        const absolute = api.childPath(this.rootPath, parts.join('/'));
        if (kind === 'put' && parts.length === 0) {
            const quiet = this.quietNextPut || this.data === undefined;
            this.quietNextPut = false;
            this.data = setAt(null, [], data);
            if (!quiet) this.changes.push(absolute);
            if (this.mode === 'query' && this.data === null) this.checkForLeaf();
            if (this.mode === 'plain' && isObject(this.data)) {
                // The leaf became an object: page its children again.
                this.mode = 'query';
                this.openStream();
            }
        } else if (kind === 'put') {
            this.data = setAt(this.data, parts, data);
            this.changes.push(absolute);
        } else if (kind === 'patch' && isObject(data)) {
            for (const [key, value] of Object.entries(data)) {
                const childParts = parts.concat(api.segments(key));
                this.data = setAt(this.data, childParts, value);
                this.changes.push(api.childPath(this.rootPath, childParts.join('/')));
            }
        }
        this.scheduleRender();
    }

    /** A query on a leaf answers null: look at the value itself and stream it plainly if it is one. */
    async checkForLeaf() {
        const generation = this.generation;
        try {
            const value = await api.get(this.rootPath, { shallow: 'true' });
            if (generation === this.generation && value !== null && !isObject(value)) {
                this.mode = 'plain';
                this.openStream();
            }
        } catch {
            // the stream's null stands
        }
    }

    // ---- Rendering --------------------------------------------------------------------------

    scheduleRender() {
        if (this.renderScheduled) return;
        this.renderScheduled = true;
        requestAnimationFrame(() => {
            this.renderScheduled = false;
            this.render();
        });
    }

    render() {
        if (this.data === undefined) return;
        if (!this.rootNode) {
            this.rootNode = this.createNode(this.rootPath, true);
            const list = element('ul', 'tree-root');
            list.append(this.rootNode);
            this.container.replaceChildren(list);
        }
        this.reconcile(this.rootNode, this.rootPath, this.data, true);
        this.changes = [];
    }

    createNode(path, isRoot) {
        const node = element('li', isRoot ? 'node root' : 'node');
        const row = element('div', 'row');
        row.dataset.path = path;
        const toggle = button('toggle', '', 'Expand');
        const key = element('span', 'key');
        const value = element('span', 'value');
        value.tabIndex = 0;
        const actions = element('span', 'actions');
        actions.append(
            button('add', '+', 'Add a child'),
            button('open', '↗', 'Open this path'),
            button('delete', '✕', 'Delete'),
        );
        const confirm = element('span', 'confirm');
        confirm.hidden = true;
        confirm.append(
            element('span', 'confirm-text', 'Delete?'),
            button('confirm-delete', 'Yes'),
            button('cancel-delete', 'No'),
        );
        row.append(toggle, key, value, actions, confirm);
        const children = element('ul', 'children');
        const pager = element('div', 'pager');
        pager.hidden = true;
        pager.append(button('more', 'Show more'));
        node.append(row, children, pager);
        node.parts = { row, toggle, key, value, actions, confirm, children, pager };
        node.childNodesByKey = new Map();
        node.signature = null;
        return node;
    }

    reconcile(node, path, value, isRoot, isNew = false) {
        const { row, toggle, key, value: valueElement, actions, children, pager } = node.parts;
        const object = isObject(value);
        const expanded = object && (isRoot || this.expanded.has(path));
        const type = typeOf(value);

        // The row itself.
        key.textContent = path === '/' ? api.namespace() : api.lastSegment(path);
        key.title = path;
        let text;
        if (object) {
            const count = Object.keys(value).length;
            if (isRoot && this.mode === 'query' && count > this.limit) {
                text = `${this.limit}+ children`;
            } else {
                text = plural(count, 'child', 'children');
            }
        } else {
            text = leafText(value);
        }
        if (valueElement.textContent !== text) valueElement.textContent = text;
        valueElement.className = `value type-${type}`;
        valueElement.title = object ? '' : 'Click to edit';
        row.classList.toggle('is-object', object);
        row.classList.toggle('is-expanded', expanded);
        toggle.hidden = !object || isRoot;
        toggle.textContent = expanded ? '▾' : '▸';
        toggle.setAttribute('aria-expanded', String(expanded));
        toggle.title = expanded ? 'Collapse' : 'Expand';
        actions.querySelector('.add').hidden = !(object || (isRoot && value === null));
        actions.querySelector('.open').hidden = !object || isRoot;
        actions.querySelector('.delete').hidden = value === null;

        const signature = `${type}:${text}`;
        const changedHere = this.changes.some((change) => change === path || path.startsWith(change === '/' ? '/' : `${change}/`));
        const changedInside = this.changes.some((change) => change.startsWith(path === '/' ? '/' : `${path}/`) && change !== path);
        const flash =
            (node.signature !== null && node.signature !== signature && !isRoot) ||
            (isNew && changedHere) ||
            (!expanded && object && changedInside && !isRoot);
        node.signature = signature;
        if (flash) {
            row.classList.remove('flash');
            void row.offsetWidth; // restart the animation
            row.classList.add('flash');
        }

        // Its children.
        if (!expanded) {
            if (node.childNodesByKey.size) {
                children.replaceChildren();
                node.childNodesByKey.clear();
            }
            pager.hidden = true;
            return;
        }
        const keys = sortedKeys(value);
        let visible;
        let moreText = null;
        if (isRoot && this.mode === 'query') {
            visible = keys.slice(0, this.limit);
            if (keys.length > this.limit) moreText = `Show ${PAGE_SIZE} more`;
        } else {
            const shown = this.shown.get(path) || PAGE_SIZE;
            visible = keys.slice(0, shown);
            const remaining = keys.length - visible.length;
            if (remaining > 0) {
                moreText = `Show ${Math.min(PAGE_SIZE, remaining)} more (${remaining} not shown)`;
            }
        }
        const wanted = new Set(visible);
        for (const [childKey, childNode] of node.childNodesByKey) {
            if (!wanted.has(childKey)) {
                childNode.remove();
                node.childNodesByKey.delete(childKey);
            }
        }
        let previous = null;
        for (const childKey of visible) {
            const childPath = api.childPath(path, childKey);
            let childNode = node.childNodesByKey.get(childKey);
            let created = false;
            if (!childNode) {
                childNode = this.createNode(childPath, false);
                node.childNodesByKey.set(childKey, childNode);
                created = true;
            }
            const expectedPosition = previous ? previous.nextSibling : children.firstChild;
            if (expectedPosition !== childNode) {
                children.insertBefore(childNode, expectedPosition);
            }
            this.reconcile(childNode, childPath, value[childKey], false, created);
            previous = childNode;
        }
        pager.hidden = moreText === null;
        if (moreText !== null) pager.querySelector('.more').textContent = moreText;
    }

    // ---- Interaction ------------------------------------------------------------------------

    onClick(event) {
        const target = event.target;
        const row = target.closest('.row');
        const node = target.closest('li.node');
        if (!node) return;
        const path = node.parts.row.dataset.path;
        const isRoot = node === this.rootNode;
        if (target.closest('.more')) {
            this.showMore(path, isRoot);
        } else if (!row) {
            if (target.closest('.add-cancel')) this.closeAddForm(node);
        } else if (target.closest('.toggle')) {
            this.toggle(path);
        } else if (target.closest('.open')) {
            this.show(path);
        } else if (target.closest('.add')) {
            this.openAddForm(node, path);
        } else if (target.closest('.delete')) {
            this.askDelete(node, true);
        } else if (target.closest('.cancel-delete')) {
            this.askDelete(node, false);
        } else if (target.closest('.confirm-delete')) {
            this.delete(node, path);
        } else if (target.closest('.value') || target.closest('.key')) {
            const value = this.valueAt(path);
            if (isObject(value)) {
                if (!isRoot) this.toggle(path);
            } else if (target.closest('.value')) {
                this.startEdit(node, path, value);
            }
        }
    }

    onKeyDown(event) {
        if (event.key === 'Enter' && event.target.classList.contains('value')) {
            event.preventDefault();
            event.target.click();
        }
    }

    onSubmit(event) {
        const form = event.target.closest('.add-form');
        if (!form) return;
        event.preventDefault();
        const node = form.closest('li.node');
        this.addChild(node, node.parts.row.dataset.path, form);
    }

    toggle(path) {
        if (this.expanded.has(path)) {
            this.expanded.delete(path);
        } else {
            this.expanded.add(path);
        }
        this.render();
    }

    showMore(path, isRoot) {
        if (isRoot && this.mode === 'query') {
            this.limit += PAGE_SIZE;
            this.openStream(); // a wider window; its first put replaces what is shown
        } else {
            this.shown.set(path, (this.shown.get(path) || PAGE_SIZE) + PAGE_SIZE);
            this.render();
        }
    }

    startEdit(node, path, value) {
        const { row, value: valueElement } = node.parts;
        if (row.querySelector('.edit')) return;
        const input = element('input', 'edit');
        input.type = 'text';
        input.value = api.typedText(value === undefined ? null : value);
        input.spellcheck = false;
        input.setAttribute('aria-label', `New value for ${path}`);
        input.size = Math.min(Math.max(input.value.length + 2, 12), 60);
        let finished = false;
        const finish = () => {
            if (finished) return;
            finished = true;
            input.remove();
            valueElement.hidden = false;
        };
        input.addEventListener('keydown', async (event) => {
            if (event.key === 'Escape') {
                finish();
                valueElement.focus();
            } else if (event.key === 'Enter') {
                event.preventDefault();
                input.disabled = true;
                try {
                    await api.set(path, api.parseTyped(input.value));
                    finish();
                } catch (error) {
                    input.disabled = false;
                    input.focus();
                    this.hooks.notify(`Saving ${path} failed: ${error.message}`, 'error');
                }
            }
        });
        input.addEventListener('blur', () => {
            if (!input.disabled) finish();
        });
        valueElement.hidden = true;
        valueElement.after(input);
        input.focus();
        input.select();
    }

    openAddForm(node, path) {
        let form = node.querySelector(':scope > .add-form');
        if (!form) {
            form = element('form', 'add-form');
            const key = element('input', 'add-key');
            key.placeholder = 'key (empty: push id)';
            key.setAttribute('aria-label', `New key under ${path}`);
            key.spellcheck = false;
            const value = element('input', 'add-value');
            value.placeholder = 'value (JSON or text)';
            value.setAttribute('aria-label', 'Value');
            value.spellcheck = false;
            const save = element('button', 'add-save primary', 'Add');
            save.type = 'submit';
            form.append(key, value, save, button('add-cancel', 'Cancel'));
            form.addEventListener('keydown', (event) => {
                if (event.key === 'Escape') this.closeAddForm(node);
            });
            node.parts.row.after(form);
        }
        form.querySelector('.add-key').focus();
    }

    closeAddForm(node) {
        const form = node.querySelector(':scope > .add-form');
        if (form) form.remove();
    }

    async addChild(node, path, form) {
        const key = form.querySelector('.add-key').value.trim();
        const text = form.querySelector('.add-value').value;
        if (api.segments(key).some((part) => INVALID_KEY.test(part))) {
            this.hooks.notify('Keys may not contain . # $ [ ] or control characters.', 'error');
            return;
        }
        if (text === '') {
            this.hooks.notify('Enter a value (type "" for an empty string).', 'error');
            return;
        }
        const value = api.parseTyped(text);
        try {
            let written;
            if (key) {
                written = api.childPath(path, key);
                await api.set(written, value);
            } else {
                written = api.childPath(path, await api.push(path, value));
            }
            this.closeAddForm(node);
            if (node !== this.rootNode && !this.expanded.has(path)) this.toggle(path);
            this.hooks.notify(`Added ${written}`, 'info');
        } catch (error) {
            this.hooks.notify(`Adding under ${path} failed: ${error.message}`, 'error');
        }
    }

    askDelete(node, asking) {
        const { actions, confirm } = node.parts;
        actions.hidden = asking;
        confirm.hidden = !asking;
        if (asking) confirm.querySelector('.cancel-delete').focus();
    }

    async delete(node, path) {
        this.askDelete(node, false);
        try {
            await api.remove(path);
            this.hooks.notify(`Deleted ${path}`, 'info');
        } catch (error) {
            this.hooks.notify(`Deleting ${path} failed: ${error.message}`, 'error');
        }
    }
}
