import struct,glob,collections,sys
for f in sorted(glob.glob(sys.argv[1])):
  b=open(f,'rb').read()
  shoff,=struct.unpack_from('<Q',b,0x28); shentsize,shnum,shstrndx=struct.unpack_from('<HHH',b,0x3a)
  strtab=struct.unpack_from('<Q',b,shoff+shstrndx*shentsize+24)[0]
  for s in range(shnum):
    sh=shoff+s*shentsize
    name,=struct.unpack_from('<I',b,sh); off,size=struct.unpack_from('<QQ',b,sh+24)
    nm=b[strtab+name:b.index(b'\0',strtab+name)].decode()
    if not nm.startswith('.text.'): continue
    n=size//16
    ins=[struct.unpack_from('<QQ',b,off+i*16) for i in range(n)]
    tot=collections.Counter(); 
    i=0; runs=0
    while i<n:
        j=i
        while j<n and (ins[j][0]&0x1ff)==0x23: j+=1
        if j-i>=8:
            runs+=1
            for lo,hi in ins[i:j]: tot[('reuseB' if hi>>59&1 else 'noreuse', 'y' if hi>>45&1 else 'n')]+=1
        i = j if j>i else i+1
    print(f[:70], runs, "runs", dict(tot))
