import type { Neighbourhood } from './api';

/** A document of the graph, where it is drawn. */
export interface PlacedNode {
  readonly id: string;
  readonly title: string;
  readonly depth: number;
  readonly x: number;
  readonly y: number;
}

export interface Layout {
  readonly width: number;
  readonly height: number;
  readonly nodes: PlacedNode[];
  readonly edges: Array<{ from: PlacedNode; to: PlacedNode }>;
}

export const GRAPH_WIDTH = 720;
export const GRAPH_HEIGHT = 460;

/**
 * A neighbourhood drawn in rings: the document in the middle, the documents one link away on
 * a circle around it, each document two links away on an outer circle, near the one it was
 * reached from (its parent's share of the circle, spread over its children).
 */
export function layoutOf(neighbourhood: Neighbourhood): Layout {
  const cx = GRAPH_WIDTH / 2;
  const cy = GRAPH_HEIGHT / 2;
  // Ellipses that fill the drawing: the labels under the nodes need the width more.
  const inner = 0.46;
  const outer = 0.84;
  const root: PlacedNode = {
    id: neighbourhood.document_id,
    title: neighbourhood.title,
    depth: 0,
    x: cx,
    y: cy,
  };
  const nodes = new Map<string, PlacedNode>([[root.id, root]]);
  const first = neighbourhood.neighbours.filter((n) => n.depth === 1);
  const angles = new Map<string, { at: number; share: number }>();
  first.forEach((n, i) => {
    const share = (2 * Math.PI) / Math.max(first.length, 1);
    const at = -Math.PI / 2 + i * share;
    angles.set(n.document_id, { at, share });
    nodes.set(n.document_id, place(n.document_id, n.title, 1, cx, cy, inner, at));
  });
  // Deeper documents around the one they were reached from.
  for (const depth of [2, 3]) {
    const level = neighbourhood.neighbours.filter((n) => n.depth === depth);
    const byParent = new Map<string, typeof level>();
    for (const n of level) byParent.set(n.from, [...(byParent.get(n.from) ?? []), n]);
    for (const [parent, children] of byParent) {
      const around = angles.get(parent) ?? { at: 0, share: 2 * Math.PI };
      children.forEach((n, i) => {
        const step = around.share / (children.length + 1);
        const at = around.at - around.share / 2 + step * (i + 1);
        angles.set(n.document_id, { at, share: step });
        const radius = depth === 2 ? outer : Math.min(outer * 1.1, 0.92);
        nodes.set(n.document_id, place(n.document_id, n.title, depth, cx, cy, radius, at));
      });
    }
  }
  const edges = neighbourhood.edges.flatMap(({ from, to }) => {
    const a = nodes.get(from);
    const b = nodes.get(to);
    return a && b ? [{ from: a, to: b }] : [];
  });
  return { width: GRAPH_WIDTH, height: GRAPH_HEIGHT, nodes: [...nodes.values()], edges };
}

/** A node at `angle` on the ellipse of `scale` times the drawing's half-width and half-height. */
function place(
  id: string,
  title: string,
  depth: number,
  cx: number,
  cy: number,
  scale: number,
  angle: number,
): PlacedNode {
  return {
    id,
    title,
    depth,
    x: Math.round(cx + scale * (cx - 60) * Math.cos(angle)),
    y: Math.round(cy + scale * (cy - 30) * Math.sin(angle)),
  };
}

/** A title short enough for a label under a node. */
export function shortLabel(title: string, max = 24): string {
  return title.length <= max ? title : `${title.slice(0, max - 1)}…`;
}
