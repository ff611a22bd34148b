'use strict';
// The compiled module; require() throws when it was not built (see package.json's description).
module.exports = require('./build/Release/igzip.node');
