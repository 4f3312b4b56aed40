// The database's sort orders, so that the page lists children as the server orders them:
// by key, by value, by a child's value and by priority.

const INT_KEY = /^-?(0|[1-9][0-9]{0,9})$/;

function integerKey(key) {
    if (!INT_KEY.test(key) || key === '-0') return null;
    const number = Number(key);
    return number >= -2147483648 && number <= 2147483647 ? number : null;
}

function compareStrings(a, b) {
    return a < b ? -1 : a > b ? 1 : 0;
}

/** Key order: keys that are 32-bit integers first, numerically, then the others as strings. */
export function compareKeys(a, b) {
    if (a === b) return 0;
    const ia = integerKey(a);
    const ib = integerKey(b);
    if (ia !== null && ib !== null) return ia - ib || compareStrings(a, b);
    if (ia !== null) return -1;
    if (ib !== null) return 1;
    return compareStrings(a, b);
}

function rank(value) {
    if (value === null || value === undefined) return 0;
    if (value === false) return 1;
    if (value === true) return 2;
    if (typeof value === 'number') return 3;
    if (typeof value === 'string') return 4;
    return 5;
}

/** Value order: null, false, true, numbers, strings, then objects (which tie). */
export function compareValues(a, b) {
    const ra = rank(a);
    const rb = rank(b);
    if (ra !== rb) return ra - rb;
    if (ra === 3) return a - b;
    if (ra === 4) return compareStrings(a, b);
    return 0;
}

/** Priority order: none first, then numbers, then strings. */
export function comparePriorities(a, b) {
    const none = (p) => p === null || p === undefined;
    if (none(a) || none(b)) return none(a) === none(b) ? 0 : none(a) ? -1 : 1;
    if (typeof a !== typeof b) return typeof a === 'number' ? -1 : 1;
    return typeof a === 'number' ? a - b : compareStrings(a, b);
}

/** The value at `path` ("a/b") inside `value`, or null. */
export function valueAt(value, path) {
    let current = value;
    for (const part of String(path).split('/').filter(Boolean)) {
        if (current === null || typeof current !== 'object' || !(part in current)) return null;
        current = current[part];
    }
    return current === undefined ? null : current;
}

/** The priority kept in an exported value (`.priority`), or null. */
export function priorityOf(value) {
    return value !== null && typeof value === 'object' && '.priority' in value ? value['.priority'] : null;
}

/** A value without the `.priority` and `.value` wrappers of the export format. */
export function stripPriorities(value) {
    if (value === null || typeof value !== 'object') return value;
    if ('.value' in value) return value['.value'];
    const result = {};
    for (const [key, child] of Object.entries(value)) {
        if (key !== '.priority') result[key] = stripPriorities(child);
    }
    return result;
}

/**
 * Sorts `[key, value]` entries as a query ordered by `orderBy` ("$key", "$value", "$priority" or
 * a child path) would; ties fall back to the key. Values may carry `.priority` (export format).
 */
export function sortEntries(entries, orderBy) {
    let compare;
    if (orderBy === '$key') {
        compare = (a, b) => compareKeys(a[0], b[0]);
    } else if (orderBy === '$priority') {
        compare = (a, b) => comparePriorities(priorityOf(a[1]), priorityOf(b[1])) || compareKeys(a[0], b[0]);
    } else if (orderBy === '$value') {
        compare = (a, b) => compareValues(stripPriorities(a[1]), stripPriorities(b[1])) || compareKeys(a[0], b[0]);
    } else {
        compare = (a, b) =>
            compareValues(stripPriorities(valueAt(a[1], orderBy)), stripPriorities(valueAt(b[1], orderBy))) ||
            compareKeys(a[0], b[0]);
    }
    return entries.slice().sort(compare);
}

/** The children of an object value sorted by key (a non-object has none). */
export function sortedKeys(value) {
    if (value === null || typeof value !== 'object') return [];
    return Object.keys(value).sort(compareKeys);
}
