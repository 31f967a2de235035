// A blueprint mounted with its fixture props, in a frame sandboxed to scripts only (an opaque
// origin: it reaches neither the console's cookie nor its page). The frame document comes from
// /console/blueprints/<id>/preview under its own policy, which allows no connection.

export function BlueprintPreview({ blueprintId, title, mountable }: { blueprintId: string; title: string; mountable: boolean }) {
  if (!mountable) {
    return <p className="meta">No preview: this component did not compile, so it cannot be mounted.</p>;
  }
  return (
    <iframe
      className="preview"
      title={`Preview of ${title}`}
      src={`/console/blueprints/${encodeURIComponent(blueprintId)}/preview`}
      sandbox="allow-scripts"
      loading="lazy"
      referrerPolicy="no-referrer"
    />
  );
}
