// Compiles the generated header with NVRTC (as cudarc would), then a copy
// with one asserted offset tampered, which must fail.
#include <nvrtc.h>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

static const char* kernel =
    "#include \"gpu_types.cuh\"\n"
    "extern \"C\" __global__ void bump(const Sample* in, Sample* out) {\n"
    "    Sample v = gpu_load(in + threadIdx.x);\n"
    "    v.value += 1.0f;\n"
    "    gpu_store(out + threadIdx.x, v);\n"
    "}\n";

static bool compile(const std::string& header, std::string* log, std::string* ptx,
                    const char* define = nullptr) {
    nvrtcProgram prog;
    const char* headers[] = {header.c_str()};
    const char* names[] = {"gpu_types.cuh"};
    nvrtcCreateProgram(&prog, kernel, "bump.cu", 1, headers, names);
    const char* opts[] = {"--gpu-architecture=compute_90", "-std=c++17", define};
    nvrtcResult r = nvrtcCompileProgram(prog, define ? 3 : 2, opts);
    size_t n;
    nvrtcGetProgramLogSize(prog, &n);
    log->resize(n);
    nvrtcGetProgramLog(prog, &(*log)[0]);
    if (r == NVRTC_SUCCESS) {
        nvrtcGetPTXSize(prog, &n);
        ptx->resize(n);
        nvrtcGetPTX(prog, &(*ptx)[0]);
    }
    nvrtcDestroyProgram(&prog);
    return r == NVRTC_SUCCESS;
}

int main() {
    std::ifstream in("gpu_types.cuh");
    std::stringstream buf;
    buf << in.rdbuf();
    std::string header = buf.str(), log, ptx;
    int major, minor;
    nvrtcVersion(&major, &minor);
    std::printf("NVRTC %d.%d\n", major, minor);
    bool ok = compile(header, &log, &ptx);
    std::printf("generated header: %s\n%.600s\n", ok ? "compiled" : "FAILED", log.c_str());
    std::istringstream lines(ptx);
    for (std::string line; std::getline(lines, line);)
        if (line.find("ld.global") != std::string::npos || line.find("st.global") != std::string::npos)
            std::printf("  ptx: %s\n", line.c_str());
    const char* variants[] = {
        "-DGPU_ALIGNED_OFFSETOF(t,m)=((unsigned long long)((char*)&(((t*)0)->m) - (char*)0))",
        "-DGPU_ALIGNED_OFFSETOF(t,m)=__builtin_offsetof(t,m)",
    };
    for (const char* v : variants) {
        std::string vlog, vptx;
        bool vok = compile(header, &vlog, &vptx, v);
        std::printf("variant %s: %s\n%.300s\n", v, vok ? "compiled" : "FAILED", vlog.c_str());
    }
    std::string honest = "GPU_ALIGNED_OFFSETOF(Sample, time) == 8";
    std::string tampered = header;
    size_t at = tampered.find(honest);
    if (at == std::string::npos) { std::printf("offset assert not found\n"); return 1; }
    tampered.replace(at, honest.size(), "GPU_ALIGNED_OFFSETOF(Sample, time) == 12");
    std::string bad_log, bad_ptx;
    bool bad_ok = compile(tampered, &bad_log, &bad_ptx);
    std::printf("tampered header: %s\n%.600s\n", bad_ok ? "COMPILED (wrong)" : "rejected", bad_log.c_str());
    return ok && !bad_ok ? 0 : 1;
}
