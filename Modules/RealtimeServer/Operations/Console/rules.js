// The Rules tab: shows the namespace's security rules as text and publishes edits; the server
// compiles them and its error (line, column, message) is shown when they do not compile.

import * as api from './api.js';

const $ = (id) => document.getElementById(id);

/** The rules editor. */
export class RulesEditor {
    constructor({ notify }) {
        this.notify = notify;
        this.loadedText = null;
        this.loadedNamespace = null;
        const text = $('rules-text');
        text.addEventListener('keydown', (event) => {
            if (event.key === 'Tab' && !event.shiftKey) {
                event.preventDefault();
                text.setRangeText('  ', text.selectionStart, text.selectionEnd, 'end');
            } else if ((event.ctrlKey || event.metaKey) && event.key === 's') {
                event.preventDefault();
                this.save();
            }
        });
        $('rules-save').addEventListener('click', () => this.save());
        $('rules-reload').addEventListener('click', () => this.load(true));
        $('rules-format').addEventListener('click', () => this.format());
    }

    get dirty() {
        return this.loadedText !== null && $('rules-text').value !== this.loadedText;
    }

    /** Loads the rules; keeps unsaved edits unless `force` is set or the namespace changed. */
    async load(force) {
        const namespace = api.namespace();
        $('rules-namespace').textContent = namespace;
        if (!force && this.loadedNamespace === namespace && this.dirty) return;
        try {
            const text = await api.rulesText();
            this.loadedText = text;
            this.loadedNamespace = namespace;
            $('rules-text').value = text;
            this.message(null);
        } catch (error) {
            this.message(`The rules could not be loaded: ${error.message}`, 'error');
        }
    }

    /** Re-indents the text when it is plain JSON (rules with comments are left alone). */
    format() {
        const text = $('rules-text');
        try {
            text.value = JSON.stringify(JSON.parse(text.value), null, 2);
            this.message(null);
        } catch (error) {
            this.message(`Not formatted: ${error.message}`, 'error');
        }
    }

    /** Installs the text as the namespace's rules. */
    async save() {
        const text = $('rules-text').value;
        $('rules-save').disabled = true;
        try {
            await api.saveRules(text);
            this.loadedText = text;
            this.loadedNamespace = api.namespace();
            this.message(`Rules published at ${new Date().toLocaleTimeString()}.`, 'success');
        } catch (error) {
            this.message(error.message, 'error');
        } finally {
            $('rules-save').disabled = false;
        }
    }

    message(text, kind) {
        const box = $('rules-message');
        box.hidden = !text;
        box.textContent = text || '';
        box.className = `message ${kind || ''}`;
    }
}
