// The owner of the test targets' precompiled header (see agentckpt_add_test): gtest and
// nlohmann/json are parsed once per build instead of once per test source.
