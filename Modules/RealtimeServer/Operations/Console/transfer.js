// Import and export on the Data tab: export downloads the value at the current path (with its
// priorities) as a .json file; import PUTs a JSON document, typed or loaded from a file, there.

import * as api from './api.js';

const $ = (id) => document.getElementById(id);

/** The file name of an export of `path` in the current namespace. */
function exportName(path) {
    const parts = api.segments(path);
    const stamp = new Date().toISOString().slice(0, 19).replace(/[:T]/g, '-');
    return `${[api.namespace(), ...parts].join('-').replace(/[^A-Za-z0-9_.-]+/g, '_')}-${stamp}.json`;
}

/** Wires the Import and Export controls to `tree` (whose path they use) and `notify`. */
export function setUpTransfer({ tree, notify }) {
    const panel = $('import-panel');
    const text = $('import-text');

    $('import-toggle').addEventListener('click', () => {
        panel.hidden = !panel.hidden;
        if (!panel.hidden) text.focus();
    });
    $('import-cancel').addEventListener('click', () => {
        panel.hidden = true;
    });

    $('import-file').addEventListener('change', async (event) => {
        const file = event.target.files && event.target.files[0];
        if (!file) return;
        text.value = await file.text();
        event.target.value = '';
    });

    $('import-run').addEventListener('click', async () => {
        const path = tree.rootPath;
        let parsed;
        try {
            parsed = JSON.parse(text.value);
        } catch (error) {
            notify(`The document is not valid JSON: ${error.message}`, 'error');
            return;
        }
        const button = $('import-run');
        button.disabled = true;
        try {
            await api.set(path, parsed);
            panel.hidden = true;
            text.value = '';
            notify(`Imported into ${path}`, 'info');
        } catch (error) {
            notify(`Import failed: ${error.message}`, 'error');
        } finally {
            button.disabled = false;
        }
    });

    $('export-button').addEventListener('click', async () => {
        const path = tree.rootPath;
        try {
            const body = await api.request('GET', path, { params: { format: 'export' }, raw: true });
            const pretty = JSON.stringify(JSON.parse(body), null, 2);
            const link = document.createElement('a');
            link.href = URL.createObjectURL(new Blob([pretty + '\n'], { type: 'application/json' }));
            link.download = exportName(path);
            link.id = 'export-link';
            link.hidden = true;
            document.body.append(link);
            link.click();
            setTimeout(() => {
                URL.revokeObjectURL(link.href);
                link.remove();
            }, 10000);
            notify(`Exported ${path} (${pretty.length.toLocaleString()} bytes)`, 'info');
        } catch (error) {
            notify(`Export failed: ${error.message}`, 'error');
        }
    });
}
