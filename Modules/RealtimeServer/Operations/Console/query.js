// The Query tab: runs a REST query (orderBy with ranges and limits) and lists the children in the
// query's order, since a JSON object does not keep it.

import * as api from './api.js';
import { sortEntries, stripPriorities, priorityOf, valueAt } from './ordering.js';

const $ = (id) => document.getElementById(id);
const MAX_TEXT = 160;

function compact(value) {
    const text = JSON.stringify(value);
    return text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}…` : text;
}

function typeClass(value) {
    if (value === null || value === undefined) return 'type-null';
    if (typeof value === 'object') return 'type-object';
    return `type-${typeof value}`;
}

function cell(text, className) {
    const td = document.createElement('td');
    td.textContent = text;
    if (className) td.className = className;
    return td;
}

/** The Query tab's form and results. */
export class QueryRunner {
    constructor({ notify }) {
        this.notify = notify;
        $('query-form').addEventListener('submit', (event) => {
            event.preventDefault();
            this.run();
        });
        const syncChild = () => {
            $('query-child').disabled = $('query-order').value !== 'child';
        };
        $('query-order').addEventListener('change', syncChild);
        syncChild();
        const syncLimit = () => {
            $('query-limit').disabled = $('query-limit-kind').value === '';
        };
        $('query-limit-kind').addEventListener('change', syncLimit);
        syncLimit();
    }

    /** The query the form describes: `{ path, orderBy, params, url, sdk }`; throws on a bad form. */
    describe() {
        const path = api.normalizePath($('query-path').value);
        const order = $('query-order').value;
        const orderBy = order === 'child' ? api.segments($('query-child').value).join('/') : order;
        if (!orderBy) throw new Error('Enter the child path to order by.');
        const params = { orderBy: JSON.stringify(orderBy) };
        const calls = [
            order === 'child' ? `orderByChild(${JSON.stringify(orderBy)})`
                : order === '$key' ? 'orderByKey()'
                    : order === '$value' ? 'orderByValue()' : 'orderByPriority()',
        ];
        const bound = (name, id) => {
            const text = $(id).value;
            if (text.trim() === '') return;
            let value = api.parseTyped(text.trim());
            if (order === '$key' && typeof value !== 'string') value = text.trim();
            params[name] = JSON.stringify(value);
            calls.push(`${name}(${JSON.stringify(value)})`);
        };
        bound('startAt', 'query-start');
        bound('endAt', 'query-end');
        bound('equalTo', 'query-equal');
        const limitKind = $('query-limit-kind').value;
        if (limitKind) {
            const count = Number($('query-limit').value);
            if (!Number.isInteger(count) || count < 1) throw new Error('The limit must be a whole number of at least 1.');
            params[limitKind] = count;
            calls.push(`${limitKind}(${count})`);
        }
        const shown = new URLSearchParams(params).toString()
            .replace(/%22/g, '"').replace(/%24/g, '$').replace(/%2F/g, '/');
        return {
            path,
            orderBy,
            params,
            url: `GET ${path === '/' ? '/' : path}.json?${shown}`,
            sdk: `ref(${JSON.stringify(path)}).${calls.join('.')}`,
        };
    }

    /** Runs the form's query and shows its children in order. */
    async run() {
        const error = $('query-error');
        const table = $('query-results');
        const empty = $('query-empty');
        error.hidden = true;
        let query;
        try {
            query = this.describe();
        } catch (failure) {
            error.textContent = failure.message;
            error.hidden = false;
            return;
        }
        this.showCode(query, null);
        const params = { ...query.params };
        if (query.orderBy === '$priority') params.format = 'export';
        let result;
        $('query-run').disabled = true;
        try {
            result = await api.get(query.path, params);
        } catch (failure) {
            error.textContent = failure.message;
            error.hidden = false;
            table.hidden = true;
            empty.hidden = true;
            return;
        } finally {
            $('query-run').disabled = false;
        }
        const entries = result !== null && typeof result === 'object' && !('.value' in result)
            ? sortEntries(Object.entries(result).filter(([key]) => key !== '.priority'), query.orderBy)
            : [];
        const body = table.querySelector('tbody');
        body.replaceChildren();
        $('query-sort-column').textContent =
            query.orderBy === '$key' ? 'Key' : query.orderBy === '$value' ? 'Value'
                : query.orderBy === '$priority' ? 'Priority' : query.orderBy;
        entries.forEach(([key, raw], index) => {
            const value = stripPriorities(raw);
            const sortValue = query.orderBy === '$key' ? key
                : query.orderBy === '$priority' ? priorityOf(raw)
                    : query.orderBy === '$value' ? value : stripPriorities(valueAt(raw, query.orderBy));
            const row = document.createElement('tr');
            row.className = 'result-row';
            row.dataset.key = key;
            row.append(
                cell(String(index + 1), 'index'),
                cell(key, 'key'),
                cell(query.orderBy === '$key' ? key : compact(sortValue), `mono ${typeClass(sortValue)}`),
                cell(compact(value), `mono ${typeClass(value)}`),
            );
            body.append(row);
        });
        table.hidden = entries.length === 0;
        empty.hidden = entries.length !== 0;
        empty.textContent = result !== null && typeof result !== 'object'
            ? `The value at ${query.path} is not an object: ${compact(result)}`
            : 'No children match.';
        this.showCode(query, entries.length);
    }

    showCode(query, count) {
        const line = $('query-code');
        const url = document.createElement('code');
        url.textContent = query.url;
        const sdk = document.createElement('span');
        sdk.className = 'muted';
        sdk.textContent = query.sdk;
        line.replaceChildren(url, sdk);
        if (count !== null) {
            const total = document.createElement('span');
            total.className = 'count';
            total.id = 'query-count';
            total.textContent = `${count} ${count === 1 ? 'child' : 'children'}`;
            line.append(total);
        }
    }
}
