#!/usr/bin/env python3
"""Finds circles between the files of a crate: `scripts/circles.py DIR...`
(each DIR a crate's `src/`). A file depends on another when it names an
item through it (`crate::`, `super::`, `self::` paths, `use` trees, a
directory module's own children), in code and in doc links alike; a path
through a module's re-export stands for the file the item is defined
in. Paths to the crate root (its public face) and plain comments, and
tests modules, are left out. Prints each circle and exits 1 if there is
one."""
import os, re, sys

def check(root):
    files = {}
    for d, _, fs in os.walk(root):
        for f in fs:
            if f.endswith('.rs'):
                p = os.path.join(d, f)
                parts = os.path.relpath(p, root)[:-3].split('/')
                if parts[-1] in ('mod', 'lib', 'main'):
                    parts = parts[:-1]
                files['::'.join(parts)] = p
    # Re-exports (`pub use a::B;` in a module): a path through them stands
    # for the file the item is defined in.
    reexports = {}
    def resolve(segs, depth=0):
        for k in range(len(segs), -1, -1):
            m = '::'.join(segs[:k])
            if m in files:
                # (The crate root's re-exports are its public face: a path
                # through them names the API, not a file.)
                if m and k < len(segs) and (m, segs[k]) in reexports and depth < 8:
                    return resolve(reexports[(m, segs[k])] + segs[k + 1:], depth + 1)
                return m
        return None
    def expand(prefix, body):
        """use-tree: a::{b, c::{d, e}} -> paths"""
        out = []
        depth = 0; cur = ''
        items = []
        for ch in body:
            if ch == '{': depth += 1
            if ch == '}': depth -= 1
            if ch == ',' and depth == 0:
                items.append(cur); cur = ''
            else:
                cur += ch
        items.append(cur)
        for it in items:
            it = it.strip()
            if not it: continue
            m = re.match(r'^((?:\w+::)*)\{(.*)\}$', it, re.S)
            if m:
                out += expand(prefix + [x for x in m.group(1).split('::') if x], m.group(2))
            else:
                it = it.split(' as ')[0].strip()
                out.append(prefix + [x for x in it.split('::') if x and x != 'self'])
        return out
    for m, p in files.items():
        src = re.sub(r'//[^\n]*', '', open(p).read())
        me = [x for x in m.split('::') if x]
        for body in re.findall(r'\bpub(?:\([^)]*\))?\s+use\s+([^;]+);', src):
            body = body.strip()
            base = me
            if body.startswith('crate::'):
                base, body = [], body[len('crate::'):]
            elif body.startswith('super::'):
                base, body = me[:-1], body[len('super::'):]
            for path in expand([], body):
                if path and path[0] != 'self':
                    reexports[(m, path[-1])] = base + path
    edges = {m: set() for m in files}
    for m, p in files.items():
        src = open(p).read()
        cut = src.find('#[cfg(test)]\nmod tests')
        if cut >= 0: src = src[:cut]
        src = re.sub(r'(?<![/:])//(?![/!])[^\n]*', '', src)  # doc links count
        me = [x for x in m.split('::') if x]
        if not me:
            # The crate root's re-exports are its public face, not a use.
            src = re.sub(r'\bpub(?:\([^)]*\))?\s+use\s+[^;]+;', '', src)
        is_dir = p.endswith(('mod.rs', 'lib.rs', 'main.rs'))
        here = me if is_dir else me[:-1]   # the module whose children are siblings
        paths = []
        for pre, body in re.findall(r'\b(crate|super|self)::\{([^;]*?)\};', src):
            paths += [(pre, x) for x in expand([], body)]
        for pre, rest in re.findall(r'\b(crate|super|self)::((?:\w+::)*\w+)', src):
            paths.append((pre, rest.split('::')))
        # bare child references in a directory module: `child::x`
        if is_dir:
            for x in re.findall(r'(?<![\w:])(\w+)::', src):
                k = '::'.join(me + [x])
                if k in files: paths.append(('self', [x]))
        defined = set(re.findall(r'\b(?:struct|enum|fn|trait|type|const|static|mod)\s+(\w+)', src))
        inline = re.search(r'\bmod\s+\w+\s*\{', src) is not None
        for pre, segs in paths:
            if pre == 'super' and inline and segs and segs[0] in defined:
                continue  # `super::` inside an inline module: this file
            if pre == 'crate': full = segs
            elif pre == 'super': full = me[:-1] + segs
            else: full = me + segs
            t = resolve(full)
            # (A path to the crate root names its public face, not a file.)
            if t is not None and t != m and t != '':
                edges[m].add(t)
    idx = {}; low = {}; st = []; on = set(); sccs = []; c = [0]
    sys.setrecursionlimit(10000)
    def sc(v):
        idx[v] = low[v] = c[0]; c[0] += 1; st.append(v); on.add(v)
        for w in edges[v]:
            if w not in idx:
                sc(w); low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], idx[w])
        if low[v] == idx[v]:
            comp = []
            while True:
                w = st.pop(); on.discard(w); comp.append(w)
                if w == v: break
            sccs.append(comp)
    for v in edges:
        if v not in idx: sc(v)
    found = False
    for comp in sccs:
        if len(comp) > 1:
            found = True
            print(len(comp), sorted(x or '<root>' for x in comp))
            for a in sorted(comp):
                print('   ', a or '<root>', '->', sorted((b or '<root>') for b in edges[a] if b in comp))

    return found

if __name__ == "__main__":
    bad = [d for d in sys.argv[1:] if check(d)]
    for d in bad:
        print(f"circles in {d}")
    sys.exit(1 if bad else 0)
