/**
 * A small dense two-phase simplex (max c·x subject to A·x ≤ b, x ≥ 0), shared by the optimizers' feasible
 * spaces (plugins/opt/polytope.ts) and the safety guard's check of a campaign's constrained space
 * (core/safety/polytope.ts). Pure arithmetic: it depends on nothing.
 */
const EPS = 1e-9;

/** max c·x subject to A·x ≤ b, x ≥ 0 (dense two-phase simplex); null when infeasible (or unbounded). */
export function linprog(A: number[][], b: number[], c: number[]): { x: number[]; value: number } | null {
  const m = b.length;
  const n = c.length;
  const D = Array.from({ length: m + 2 }, () => new Array<number>(n + 2).fill(0));
  const B = Array.from({ length: m }, (_, i) => n + i);
  const N = [...Array.from({ length: n }, (_, j) => j), -1];
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) D[i]![j] = A[i]![j]!;
    D[i]![n] = -1;
    D[i]![n + 1] = b[i]!;
  }
  for (let j = 0; j < n; j++) D[m]![j] = -c[j]!;
  D[m + 1]![n] = 1;
  const pivot = (r: number, s: number) => {
    const inv = 1 / D[r]![s]!;
    for (let i = 0; i < m + 2; i++) {
      if (i === r) continue;
      const f = D[i]![s]! * inv;
      if (f !== 0) for (let j = 0; j < n + 2; j++) if (j !== s) D[i]![j]! -= D[r]![j]! * f;
    }
    for (let j = 0; j < n + 2; j++) if (j !== s) D[r]![j]! *= inv;
    for (let i = 0; i < m + 2; i++) if (i !== r) D[i]![s]! *= -inv;
    D[r]![s] = inv;
    [B[r], N[s]] = [N[s]!, B[r]!];
  };
  const better = (a: number, b2: number, ia: number, ib: number) => a < b2 || (a === b2 && ia < ib);
  const simplex = (phase: 1 | 2): boolean => {
    const row = phase === 1 ? m + 1 : m;
    for (let iter = 0; iter < 50 * (m + n + 2); iter++) {
      let s = -1;
      for (let j = 0; j <= n; j++) {
        if (phase === 2 && N[j] === -1) continue;
        if (s === -1 || better(D[row]![j]!, D[row]![s]!, N[j]!, N[s]!)) s = j;
      }
      if (D[row]![s]! > -EPS) return true;
      let r = -1;
      for (let i = 0; i < m; i++) {
        if (D[i]![s]! < EPS) continue;
        if (r === -1 || better(D[i]![n + 1]! / D[i]![s]!, D[r]![n + 1]! / D[r]![s]!, B[i]!, B[r]!)) r = i;
      }
      if (r === -1) return false;
      pivot(r, s);
    }
    return false;
  };
  let r = 0;
  for (let i = 1; i < m; i++) if (D[i]![n + 1]! < D[r]![n + 1]!) r = i;
  if (m > 0 && D[r]![n + 1]! < -EPS) {
    pivot(r, n);
    if (!simplex(1) || D[m + 1]![n + 1]! < -EPS) return null;
    for (let i = 0; i < m; i++) {
      if (B[i] !== -1) continue;
      let s = -1;
      for (let j = 0; j <= n; j++) if (s === -1 || better(D[i]![j]!, D[i]![s]!, N[j]!, N[s]!)) s = j;
      pivot(i, s);
    }
  }
  if (!simplex(2)) return null;
  const x = new Array<number>(n).fill(0);
  for (let i = 0; i < m; i++) if (B[i]! < n && B[i]! >= 0) x[B[i]!] = D[i]![n + 1]!;
  return { x, value: D[m]![n + 1]! };
}
