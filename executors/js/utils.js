// The JavaScript half of the sandbox's utils, and the helpers the executor
// calls inside a realm. Compiled once, run in every fresh realm before the
// tool's code. It evaluates to make(name), which builds one helper when
// the tool first touches it: a call pays only for what it uses. Names that
// start with a space are the executor's own helpers and are not reachable
// through utils. See utilsNames in utils.go for the documented semantics.
(function () {
  'use strict';

  // lib builds the helpers the utils share, once per realm and only when
  // a util is first used: running this file must stay cheap.
  let shared;
  function lib() {
    if (shared !== undefined) return shared;
    const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July',
      'August', 'September', 'October', 'November', 'December'];
    const UNIT_MS = { millisecond: 1, second: 1e3, minute: 6e4, hour: 36e5, day: 864e5, week: 6048e5 };

    function fail(Kind, fn, msg) {
      throw new Kind('utils.' + fn + ': ' + msg);
    }

    function toDate(value, fn) {
      const d = value === undefined || value === 'now' ? new Date()
        : value instanceof Date ? new Date(value.getTime()) : new Date(value);
      if (isNaN(d.getTime())) fail(TypeError, fn, 'invalid date: ' + String(value));
      return d;
    }

    // unit normalises "Days" and "day" to "day".
    function unit(u, fn, calendar) {
      const s = String(u === undefined ? 'days' : u).toLowerCase().replace(/s$/, '');
      if (UNIT_MS[s] !== undefined || (calendar && (s === 'month' || s === 'year'))) return s;
      fail(RangeError, fn, 'unknown unit: ' + String(u));
    }

    function number(v, fn, what) {
      const n = Number(v);
      if (isNaN(n)) fail(TypeError, fn, what + ' must be a number, got ' + String(v));
      return n;
    }

    function array(v, fn) {
      if (!Array.isArray(v)) fail(TypeError, fn, 'expected an array');
      return v;
    }

    function isPlainObject(v) {
      if (v === null || typeof v !== 'object') return false;
      const p = Object.getPrototypeOf(v);
      return p === null || p === Object.prototype;
    }

    // put defines rather than assigns, so that a "__proto__" key is a key.
    function put(obj, key, value) {
      Object.defineProperty(obj, key, { value: value, enumerable: true, writable: true, configurable: true });
    }

    function shuffled(arr) {
      const a = arr.slice();
      for (let i = a.length - 1; i > 0; i--) {
        const j = Math.floor(Math.random() * (i + 1));
        const t = a[i]; a[i] = a[j]; a[j] = t;
      }
      return a;
    }

    shared = { MONTHS, UNIT_MS, fail, toDate, unit, number, array, isPlainObject, put, shuffled };
    return shared;
  }

  // subclassDepth counts the constructors between an error and the
  // built-in it extends: each left a stack frame (its super() call) above
  // the place the error was created. Built-ins are native functions.
  function subclassDepth(e) {
    let c = e.constructor;
    for (let k = 0; k < 16 && typeof c === 'function'; k++) {
      let src = '';
      try { src = Function.prototype.toString.call(c); } catch (_) { return 0; }
      if (/\[native code\]\s*\}$/.test(src)) return k;
      c = Object.getPrototypeOf(c);
    }
    return 0;
  }

  // json is the executor's JSON serialiser (jsonenc.go), passed in for
  // its own helpers: the realm's JSON.stringify is the tool's to replace.
  return function make(name, json) {
    const { MONTHS, UNIT_MS, fail, toDate, unit, number, array, isPlainObject, put, shuffled } =
      name.charAt(0) === ' ' ? {} : lib();
    switch (name) {
      case 'urlEncode': return function urlEncode(text) { return encodeURIComponent(String(text)); };
      case 'urlDecode': return function urlDecode(text) { return decodeURIComponent(String(text)); };

      case 'now': return function now() { return new Date().toISOString(); };
      case 'timestamp': return function timestamp() { return Date.now(); };
      case 'dateDiff': return function dateDiff(date1, date2, u) {
        const ms = toDate(date2, 'dateDiff').getTime() - toDate(date1, 'dateDiff').getTime();
        return Math.trunc(ms / UNIT_MS[unit(u, 'dateDiff', false)]) + 0;
      };
      case 'dateAdd': return function dateAdd(date, amount, u) {
        const d = toDate(date, 'dateAdd');
        const n = number(amount, 'dateAdd', 'amount');
        const k = unit(u, 'dateAdd', true);
        if (k === 'month' || k === 'year') {
          const months = d.getUTCMonth() + Math.trunc(n) * (k === 'year' ? 12 : 1);
          const day = d.getUTCDate();
          d.setUTCDate(1);
          d.setUTCFullYear(d.getUTCFullYear() + Math.floor(months / 12), ((months % 12) + 12) % 12);
          const last = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate();
          d.setUTCDate(Math.min(day, last));
        } else {
          d.setTime(d.getTime() + n * UNIT_MS[k]);
        }
        if (isNaN(d.getTime())) fail(RangeError, 'dateAdd', 'date out of range');
        return d.toISOString();
      };
      case 'formatDate': return function formatDate(date, locale) {
        const d = toDate(date, 'formatDate');
        const y = d.getUTCFullYear(), m = d.getUTCMonth(), day = d.getUTCDate();
        const loc = String(locale === undefined ? 'en-US' : locale).toLowerCase();
        if (loc === 'en-us' || loc === 'en') return MONTHS[m] + ' ' + day + ', ' + y;
        if (loc.startsWith('en-')) return day + ' ' + MONTHS[m] + ' ' + y;
        return d.toISOString().slice(0, 10);
      };

      case 'titleCase': return function titleCase(text) {
        return String(text).replace(/\S+/g, (w) => w.charAt(0).toUpperCase() + w.slice(1).toLowerCase());
      };
      case 'truncate': return function truncate(text, maxLength, suffix) {
        const s = String(text);
        const max = maxLength === undefined ? 100 : Math.max(0, Math.floor(number(maxLength, 'truncate', 'maxLength')));
        const tail = suffix === undefined ? '...' : String(suffix);
        if (s.length <= max) return s;
        if (max <= tail.length) return tail.slice(0, max);
        return s.slice(0, max - tail.length) + tail;
      };
      case 'countWords': return function countWords(text) {
        const s = String(text === undefined || text === null ? '' : text).trim();
        return s === '' ? 0 : s.split(/\s+/).length;
      };

      case 'isEmail': return function isEmail(value) {
        return typeof value === 'string' && /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/.test(value);
      };
      case 'isJson': return function isJson(value) {
        if (typeof value !== 'string') return false;
        try { JSON.parse(value); return true; } catch (e) { return false; }
      };
      case 'isUuid': return function isUuid(value) {
        return typeof value === 'string' && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value);
      };

      case 'clamp': return function clamp(value, min, max) {
        const v = number(value, 'clamp', 'value'), lo = number(min, 'clamp', 'min'), hi = number(max, 'clamp', 'max');
        if (lo > hi) fail(RangeError, 'clamp', 'min is greater than max');
        return Math.min(Math.max(v, lo), hi);
      };
      case 'round': return function round(value, decimals) {
        const v = number(value, 'round', 'value');
        const d = decimals === undefined ? 0 : Math.trunc(number(decimals, 'round', 'decimals'));
        const sign = v < 0 ? -1 : 1;
        let r = Number(Math.round(Number(Math.abs(v) + 'e' + d)) + 'e' + (-d));
        if (!isFinite(r)) r = Math.round(Math.abs(v) * Math.pow(10, d)) / Math.pow(10, d);
        return sign * r + 0;
      };
      case 'randomInt': return function randomInt(min, max) {
        let lo = Math.ceil(min === undefined ? 0 : number(min, 'randomInt', 'min'));
        let hi = Math.floor(max === undefined ? 100 : number(max, 'randomInt', 'max'));
        if (lo > hi) { const t = lo; lo = hi; hi = t; }
        return lo + Math.floor(Math.random() * (hi - lo + 1));
      };
      case 'sum': return function sum(numbers) {
        return array(numbers, 'sum').reduce((s, n) => s + Number(n), 0);
      };
      case 'avg': return function avg(numbers) {
        const a = array(numbers, 'avg');
        return a.length === 0 ? 0 : a.reduce((s, n) => s + Number(n), 0) / a.length;
      };

      case 'parseJson': return function parseJson(text) { return JSON.parse(text); };
      case 'toJson': return function toJson(data, indent) {
        return JSON.stringify(data, null, indent === undefined ? 2 : indent);
      };
      case 'flatten': return function flatten(obj, prefix) {
        const out = {};
        const seen = new Set();
        const walk = (o, p) => {
          if (seen.has(o)) fail(TypeError, 'flatten', 'circular structure');
          seen.add(o);
          for (const k of Object.keys(o)) {
            const key = p === '' ? k : p + '.' + k;
            const v = o[k];
            if (isPlainObject(v) && Object.keys(v).length > 0) walk(v, key);
            else put(out, key, v);
          }
          seen.delete(o);
        };
        if (obj !== null && typeof obj === 'object') walk(obj, prefix === undefined ? '' : String(prefix));
        return out;
      };
      case 'getPath': return function getPath(obj, path) {
        const re = /\[\s*(?:'([^']*)'|"([^"]*)"|([^\]]*?))\s*\]|([^.[\]]+)/g;
        const p = String(path);
        let cur = obj;
        let m;
        while ((m = re.exec(p)) !== null) {
          const key = m[1] !== undefined ? m[1] : m[2] !== undefined ? m[2] : m[3] !== undefined ? m[3] : m[4];
          if (cur === null || cur === undefined) return undefined;
          if (!Object.prototype.hasOwnProperty.call(Object(cur), key)) return undefined;
          cur = cur[key];
        }
        return cur;
      };

      case 'unique': return function unique(arr) { return Array.from(new Set(array(arr, 'unique'))); };
      case 'chunk': return function chunk(arr, size) {
        const a = array(arr, 'chunk');
        const n = Math.floor(number(size, 'chunk', 'size'));
        if (!(n >= 1)) fail(RangeError, 'chunk', 'size must be at least 1');
        const out = [];
        for (let i = 0; i < a.length; i += n) out.push(a.slice(i, i + n));
        return out;
      };
      case 'shuffle': return function shuffle(arr) { return shuffled(array(arr, 'shuffle')); };
      case 'sample': return function sample(arr, n) {
        const k = n === undefined ? 1 : Math.max(0, Math.floor(number(n, 'sample', 'n')));
        return shuffled(array(arr, 'sample')).slice(0, k);
      };
      case 'groupBy': return function groupBy(arr, key) {
        const out = {};
        const by = typeof key === 'function' ? key : (item) => (item === null || item === undefined ? undefined : item[key]);
        for (const item of array(arr, 'groupBy')) {
          const k = String(by(item));
          if (Object.prototype.hasOwnProperty.call(out, k)) out[k].push(item);
          else put(out, k, [item]);
        }
        return out;
      };

      // The executor's own helpers.
      case ' describe': return function (e) {
        try {
          if (e !== null && typeof e === 'object' && Object.prototype.toString.call(e) === '[object Error]') {
            const n = e.name === undefined ? '' : String(e.name);
            const m = e.message === undefined ? '' : String(e.message);
            return [n && m ? n + ': ' + m : n || m || 'Error', String(e.stack === undefined ? '' : e.stack), subclassDepth(e)];
          }
          let text;
          if (typeof e === 'string') text = e;
          else {
            try { text = json(e); } catch (_) { /* fall back to String */ }
            if (text === undefined) text = String(e);
          }
          return ['Uncaught ' + text, '', 0];
        } catch (_) {
          return ['Uncaught exception', '', 0];
        }
      };
      case ' inspect': return function (v) {
        try {
          switch (typeof v) {
            case 'function': return '[Function: ' + (v.name || 'anonymous') + ']';
            case 'bigint': return String(v) + 'n';
            case 'symbol': return v.toString();
            case 'number': case 'boolean': return String(v);
          }
          if (Object.prototype.toString.call(v) === '[object Error]') return String(v);
          const s = json(v);
          if (s !== undefined) return s;
        } catch (_) { /* fall back below */ }
        try { return Object.prototype.toString.call(v); } catch (_) { return '[object]'; }
      };
    }
    return undefined;
  };
})()
