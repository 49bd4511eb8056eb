// Which calls a global-mode stream capture survives (docs/GRAPHS.md).
// nvcc -O2 -arch=sm_90 capture-probe.cu -o probe && ./probe
#include <cstdio>
#include <cuda_runtime.h>
#define ST(s) do{cudaStreamCaptureStatus st; cudaError_t e2=cudaStreamIsCapturing(s,&st); printf("   capture status=%d (%s)\n",(int)st,cudaGetErrorName(e2));}while(0)
#define R(name, call) do{cudaError_t e=call; printf("%-60s -> %s\n", name, cudaGetErrorName(e)); cudaGetLastError();}while(0)
__global__ void k(float*p){p[threadIdx.x]+=1;}
int main(){
  cudaStream_t s, o; cudaStreamCreateWithFlags(&s,cudaStreamNonBlocking); cudaStreamCreateWithFlags(&o,cudaStreamNonBlocking);
  float*d; cudaMalloc(&d,4096); cudaDeviceSynchronize();
  cudaEvent_t never, inA; cudaEventCreate(&never); cudaEventCreate(&inA);
  cudaGraph_t g;
  R("begin", cudaStreamBeginCapture(s,cudaStreamCaptureModeGlobal));
  R("P1 wait(capturing, never-recorded event)", cudaStreamWaitEvent(s,never,0)); ST(s);
  cudaEvent_t made; R("P11 cudaEventCreate during capture", cudaEventCreate(&made)); ST(s);
  cudaStream_t ns; R("P12 cudaStreamCreate during capture", cudaStreamCreateWithFlags(&ns,cudaStreamNonBlocking)); ST(s);
  R("record inA on capturing", cudaEventRecord(inA,s));
  R("record made on capturing", cudaEventRecord(made,s));
  k<<<1,32,0,s>>>(d);
  R("P3 destroy event recorded in capture, during capture", cudaEventDestroy(made)); ST(s);
  R("wait(capturing, inA recorded in capture)", cudaStreamWaitEvent(s,inA,0)); ST(s);
  static float host[32]; R("P9 memcpy H2D pageable during capture", cudaMemcpyAsync(d,host,128,cudaMemcpyHostToDevice,s)); ST(s);
  R("memsetAsync during capture", cudaMemsetAsync(d,0,128,s)); ST(s);
  R("end", cudaStreamEndCapture(s,&g));
  printf("graph=%p\n",(void*)g);
  R("P2 wait(other stream, inA recorded in ended capture)", cudaStreamWaitEvent(o,inA,0));
  R("P2b query inA after capture", cudaEventQuery(inA));
  R("P4 record inA on other stream after capture", cudaEventRecord(inA,o));
  R("P4b query inA after re-record", cudaEventQuery(inA));
  cudaEvent_t inB; cudaEventCreate(&inB);
  cudaGraph_t g2;
  R("begin2", cudaStreamBeginCapture(s,cudaStreamCaptureModeGlobal));
  R("record inB in capture 2", cudaEventRecord(inB,s));
  k<<<1,32,0,s>>>(d);
  cudaEvent_t old; cudaEventCreate(&old);
  R("end2", cudaStreamEndCapture(s,&g2));
  cudaGraph_t g3;
  R("begin3", cudaStreamBeginCapture(s,cudaStreamCaptureModeGlobal));
  R("P13 wait(capturing, inB recorded in ended capture 2)", cudaStreamWaitEvent(s,inB,0)); ST(s);
  R("end3", cudaStreamEndCapture(s,&g3));
  R("begin4", cudaStreamBeginCapture(s,cudaStreamCaptureModeGlobal));
  R("P14 wait(other non-capturing, inB) during other capture", cudaStreamWaitEvent(o,inB,0)); ST(s);
  R("P15 record event on other stream during capture", cudaEventRecord(old,o)); ST(s);
  R("P16 destroy inB during capture 4", cudaEventDestroy(inB)); ST(s);
  cudaGraph_t g4; R("end4", cudaStreamEndCapture(s,&g4));
  R("sync", cudaDeviceSynchronize());
  return 0;
}
