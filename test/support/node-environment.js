const { TestEnvironment } = require('jest-environment-node');

/**
 * Jest's node environment with the host's Float32Array. onnxruntime-node
 * (the local embedding models) makes its output arrays in the host realm and
 * onnxruntime-common checks them with `instanceof Float32Array` inside the
 * test's realm, which fails for every inference unless both are the same.
 */
class NodeEnvironmentWithHostArrays extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    this.global.Float32Array = Float32Array;
  }
}

module.exports = NodeEnvironmentWithHostArrays;
