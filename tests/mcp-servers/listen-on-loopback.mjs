// Preloaded (`node --import`) by the MCP tests before a server that listens on the port in
// $PORT: binds it to 127.0.0.1 instead of every interface and reports the port it got
// (PORT=0 picks a free one), so a test knows where to connect without guessing a free port.
import net from "node:net";

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if ((typeof args[0] === "number" || typeof args[0] === "string") && typeof args[1] === "function") {
    args.splice(1, 0, "127.0.0.1");
  }
  this.once("listening", () => console.error(`LISTENING-ON-PORT ${this.address().port}`));
  return listen.apply(this, args);
};
