// The owner of the libraries' precompiled header (agentckpt_use_pch in CMakeLists.txt).
